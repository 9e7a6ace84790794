"""What a run gathers for its review page, the same for a crawl (NEARDUP_REPORT) and for
``neardup dedup --report``: every verdict counted, each duplicate beside its first copy.

One collector for both front ends, so a page reads the same whichever made it: a text that
could not be judged (too short, no text, a page that could not be extracted) is counted
"not judged" in both.
"""

from __future__ import annotations

from collections.abc import Callable

from ..engine.verdicts import DUPLICATE, SHORT, Verdict
from .page import FirstCopies, Pair, Report

__all__ = ["NOT_JUDGED", "Review"]

NOT_JUDGED = "not judged"


class Review:
    """The review pages of one run, written to ``path`` by :meth:`write`. ``read_kept`` reads
    the texts a store kept (``Store.texts``) for first copies this run did not see."""

    def __init__(
        self, path: str, title: str = "neardup review", read_kept: Callable[[list[int]], dict[int, str]] | None = None
    ):
        self.path = path
        self.report = Report(path, title)
        self.first_copies = FirstCopies(read_kept)

    def not_judged(self) -> None:
        """An item or record that got no verdict (no text, too short, not extracted)."""
        self.report.count(NOT_JUDGED)

    def first_copy(self, verdict: Verdict) -> str | None:
        """The text of a duplicate's first copy: seen in this run, else kept by the store (a
        store read: call it where the front end makes its store calls); None when neither."""
        return self.first_copies.text(verdict.similar_id) if verdict.status == DUPLICATE else None

    def note(self, key: str, verdict: Verdict, text: str | None, first_copy: str | None = None) -> None:
        """Count a verdict; a duplicate gets its section, beside ``first_copy`` (see
        :meth:`first_copy`); a story's first copy is remembered for its later copies."""
        if verdict.status == SHORT:
            self.not_judged()
        elif verdict.status == DUPLICATE:
            self.report.add(
                Pair(
                    key,
                    text or "",
                    verdict.duplicate_of or "",
                    first_copy,
                    verdict.method,
                    verdict.containment,
                    verdict.jaccard,
                    verdict.distance,
                )
            )
        else:
            self.report.count(verdict.status)
            if text is not None and verdict.doc_id == verdict.similar_id:
                self.first_copies.remember(verdict.similar_id, text)

    def write(self) -> list[str]:
        """Write the pages; their paths, the first one first."""
        return self.report.write()

    def close(self) -> None:
        self.report.close()
