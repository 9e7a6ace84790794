"""The review page of a crawl (NEARDUP_REPORT): every verdict counted, every duplicate shown
beside its first copy.

A first copy's text is the one this run saw, else the one the store kept (NEARDUP_KEEP_TEXT),
read through the store's calls like any other; without either the pair is shown with the
copy alone. The page is written when the spider closes. Failing to read a first copy or to
write the page is logged, and never changes a verdict.
"""

from __future__ import annotations

import logging

from .deferreds import maybe_await
from ..engine.verdicts import DUPLICATE, Verdict
from ..review.page import FirstCopies, Pair, Report
from .runlog import RunLog
from .storecalls import StoreCalls
from ..stores import Store

__all__ = ["CrawlReview"]


class CrawlReview:
    """The review page written to ``path``, with the first copies read from ``store``."""

    def __init__(self, path: str, title: str, store: Store, calls: StoreCalls, log: RunLog):
        self.path = path
        self.report = Report(path, title)
        self.first_copies = FirstCopies(store.texts)
        self.calls = calls
        self.log = log

    async def note(self, verdict: Verdict, text: str | None) -> None:
        """Count the verdict; a duplicate's section shows its first copy's text when this run
        saw it or the store kept it."""
        if verdict.status != DUPLICATE:
            self.report.count(verdict.status)
            if text is not None and verdict.doc_id == verdict.similar_id:
                self.first_copies.remember(verdict.similar_id, text)
            return
        try:
            first = await maybe_await(self.calls.run(self.first_copies.text, verdict.similar_id))
        except Exception as exc:  # shown without it; the verdict stands
            self.log.once("report_text", logging.WARNING, "Could not read the first copy of %s: %s", verdict.key, exc)
            first = None
        self.report.add(Pair(
            verdict.key, text or "", verdict.duplicate_of or "", first,
            verdict.method, verdict.containment, verdict.jaccard, verdict.distance,
        ))

    def write(self) -> None:
        """Write the page and let its resources go; a failure to write it is logged."""
        try:
            pages = self.report.write()
            self.log.log(logging.INFO, "scrapy-neardup: review page %s (%d pages)", pages[0], len(pages))
        except OSError as exc:
            self.log.log(logging.ERROR, "scrapy-neardup: cannot write the review page %s: %s", self.path, exc)
        finally:
            self.report.close()
