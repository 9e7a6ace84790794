"""The review page of a crawl (NEARDUP_REPORT), gathered by the collector the CLI uses too
(:class:`~scrapy_neardup.review.collect.Review`).

A first copy's text is the one this run saw, else the one the store kept (NEARDUP_KEEP_TEXT),
read through the store's calls like any other store read. The page's path is checked and held
for its spider when the spider opens (:mod:`.runfiles`), and the page written when it closes.
Failing to read a first copy or to write the page is logged, and never changes a verdict.
"""

from __future__ import annotations

import logging
from typing import Any

from ..engine.verdicts import DUPLICATE, Verdict
from ..review.collect import Review
from .runfiles import claim_page, release_page
from .runlog import RunLog
from .storeaccess import StoreAccess

__all__ = ["CrawlReview"]


class CrawlReview:
    """The review page of ``spider`` written to ``path``, its first copies read through the
    store's calls once :meth:`attach` gives them. ValueError when another spider of this
    process writes a page there."""

    def __init__(self, path: str, spider: Any, log: RunLog):
        claim_page(path, spider)
        self.path = path
        self.review = Review(path, f"neardup review: {getattr(spider, 'name', '')}")
        self.access: StoreAccess | None = None
        self.log = log

    def attach(self, access: StoreAccess) -> None:
        """The store is open: first copies this run did not see are read from it."""
        self.access = access
        self.review.first_copies.read = access.store.texts

    def not_judged(self) -> None:
        self.review.not_judged()

    async def note(self, key: str, verdict: Verdict, text: str | None, title: str | None = None) -> None:
        """Count the verdict; a duplicate's section shows its first copy's text when this run
        saw it or the store kept it; ``title``: the item's headline."""
        first = None
        if verdict.status == DUPLICATE and self.access is not None:
            try:
                first = await self.access.first_copy(self.review, verdict)
            except Exception as exc:  # shown without it; the verdict stands
                self.log.once("report_text", logging.WARNING, "Could not read the first copy of %s: %s", key, exc)
        self.review.note(key, verdict, text, first, title)

    def write(self) -> None:
        """Write the page and let its resources and its path go; a failure to write it is logged."""
        try:
            pages = self.review.write()
            self.log.log(logging.INFO, "scrapy-neardup: review page %s (%d pages)", pages[0], len(pages))
            for path in self.review.report.left_alone:
                self.log.log(
                    logging.WARNING,
                    "scrapy-neardup: %s is not a page neardup wrote: left as it is, the pages after the "
                    "first are named around it",
                    path,
                )
        except OSError as exc:
            self.log.log(logging.ERROR, "scrapy-neardup: cannot write the review page %s: %s", self.path, exc)
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Let the page's resources and its path go without writing it (the crawl did not start)."""
        self.review.close()
        release_page(self.path)
