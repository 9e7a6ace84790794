"""The review page of a crawl (NEARDUP_REPORT), gathered by the collector the CLI uses too
(:class:`~scrapy_neardup.review.collect.Review`).

A first copy's text is the one this run saw, else the one the store kept (NEARDUP_KEEP_TEXT),
read through the store's calls like any other store read. The page is written when the spider
closes. Failing to read a first copy or to write the page is logged, and never changes a verdict.
"""

from __future__ import annotations

import logging

from ..engine.verdicts import DUPLICATE, Verdict
from ..review.collect import Review
from .runlog import RunLog
from .storeaccess import StoreAccess

__all__ = ["CrawlReview"]


class CrawlReview:
    """The review page written to ``path``, with the first copies read through ``access``."""

    def __init__(self, path: str, title: str, access: StoreAccess, log: RunLog):
        self.path = path
        self.review = Review(path, title, access.store.texts)
        self.access = access
        self.log = log

    def not_judged(self) -> None:
        self.review.not_judged()

    async def note(self, key: str, verdict: Verdict, text: str | None, title: str | None = None) -> None:
        """Count the verdict; a duplicate's section shows its first copy's text when this run
        saw it or the store kept it; ``title``: the item's headline."""
        first = None
        if verdict.status == DUPLICATE:
            try:
                first = await self.access.first_copy(self.review, verdict)
            except Exception as exc:  # shown without it; the verdict stands
                self.log.once("report_text", logging.WARNING, "Could not read the first copy of %s: %s", key, exc)
        self.review.note(key, verdict, text, first, title)

    def write(self) -> None:
        """Write the page and let its resources go; a failure to write it is logged."""
        try:
            pages = self.review.write()
            self.log.log(logging.INFO, "scrapy-neardup: review page %s (%d pages)", pages[0], len(pages))
        except OSError as exc:
            self.log.log(logging.ERROR, "scrapy-neardup: cannot write the review page %s: %s", self.path, exc)
        finally:
            self.review.close()
