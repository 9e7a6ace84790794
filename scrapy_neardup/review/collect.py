"""What a run gathers for its review page, the same for a crawl (NEARDUP_REPORT) and for
``neardup dedup --report``: every verdict counted, each duplicate beside its first copy.

One collector for both front ends, so a page reads the same whichever made it: a text that
could not be judged (too short, no text, a page that could not be extracted) is counted
"not judged" in both.
"""

from __future__ import annotations

from collections.abc import Callable

from ..engine.verdicts import DUPLICATE, SHORT, UNIQUE, Verdict
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
        """The text of the copy a duplicate names: its story's first copy seen in this run,
        else the text the store kept of that very copy (``waits_for``: the copy that holds the
        story now, never the copy it replaced; a store read: call it where the front end makes
        its store calls); None when neither."""
        if verdict.status != DUPLICATE:
            return None
        return self.first_copies.text(verdict.similar_id, stored_as=verdict.waits_for)

    def note(
        self, key: str, verdict: Verdict, text: str | None, first_copy: str | None = None, title: str | None = None
    ) -> None:
        """Count a verdict; a duplicate gets its section, beside ``first_copy`` (see
        :meth:`first_copy`); a story kept is listed, and the text that is its first copy from
        now on (a new story, a copy taking its place, an updated page, or a revisit: a first copy
        seen again) is remembered for its later copies. ``title``: the item's headline."""
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
                    title,
                    self.first_copies.title(verdict.similar_id),
                    verdict.similar_id,
                )
            )
        else:
            self.report.count(verdict.status)
            took_place = verdict.replaces is not None or verdict.updated
            if verdict.status == UNIQUE:
                note = f"replaces {verdict.replaces}" if verdict.replaces is not None else ""
                note = "updated page" if verdict.updated else note
                note = "key collision: another story is stored under this key too" if verdict.key_collision else note
                self.report.story(key, title, note, verdict.similar_id, took_place)
            if text is not None:
                self.first_copies.remember(verdict.similar_id, text, title, replace=took_place)

    def write(self) -> list[str]:
        """Write the pages; their paths, the first one first. A first copy this run saw after
        its duplicate (re-crawled later in the run) is shown beside it too."""
        return self.report.write(self.first_copies.held_copy)

    def close(self) -> None:
        self.report.close()
