"""A store that fails during the crawl: items wait out an outage, pass unchecked past it, and
the crawl stops.

Going on without the store's memory would keep every reprint, and dropping an item that was
never checked would lose data; so an item whose check meets a store that is down waits and
tries again (:meth:`StoreCalls.wait_to_retry`): a short outage (a restart, a failover) costs
time, not reprints. Past ``NEARDUP_STORE_DOWN_TIMEOUT``, or once the crawl is closing, the
item passes unchecked, counted, and the crawl stops. A store that lost its data stops the
crawl at once. Commits and releases that met an outage are tried again once the store
answers, and a last time at close.
"""

from __future__ import annotations

import logging
from typing import Any

from ..engine.verdicts import Verdict
from .reservations import Reservations
from .runlog import RunLog
from .stop import STORE_DOWN, STORE_LOST
from .storecalls import StoreCalls
from ..stores import StoreUnavailable
from ..stores.base import StoreLost

__all__ = ["Outages"]


class Outages:
    """The failures of one pipeline's store calls, and the stop of its crawl."""

    def __init__(self, crawler: Any, calls: StoreCalls, log: RunLog):
        self.crawler = crawler
        self.calls = calls
        self.log = log
        self.stopping = False  # stop_crawl was called
        self.closing = False  # the spider is closing
        self.unsettled: list[tuple[str, Verdict]] = []  # commits and releases that met an outage

    async def may_retry(self, key: str, exc: Exception) -> bool:
        """After the check of item ``key`` failed with ``exc``: True once the store may be tried
        again; False when the item passes unchecked (counted)."""
        if isinstance(exc, StoreUnavailable) and not isinstance(exc, StoreLost):
            if await self.calls.wait_to_retry(self.crawl_closing):
                return True
            self.store_down(key, exc)
        else:
            self.store_error(key, exc)
        return False

    def store_error(self, key: str, exc: Exception) -> None:
        """A store that failed on the item's check: it passes unchecked, counted."""
        self.log.inc("unchecked")
        self.log.inc("store_error")
        self.log.once("store_error", logging.ERROR, "Store error, item %s passed unchecked: %s", key, exc)
        if isinstance(exc, StoreLost):
            self.stop_crawl(STORE_LOST)

    def store_down(self, key: str, exc: Exception) -> None:
        """The store stayed down past the bound (or the crawl is closing): the item passes
        unchecked, counted, and the crawl stops."""
        self.log.inc("unchecked")
        self.log.inc("store_down")
        calls = self.calls
        if calls.given_up and not self.stopping:
            self.log.log(
                logging.ERROR,
                "scrapy-neardup: store %s has been down for %.1f s, NEARDUP_STORE_DOWN_TIMEOUT = %g s; the "
                "crawl stops (%s). Items still in flight pass unchecked, counted neardup/unchecked: %s",
                calls.describe,
                calls.down_for(),
                calls.down_timeout,
                STORE_DOWN,
                exc,
            )
            self.stop_crawl(STORE_DOWN)

    def store_failed(self, action: str, verdict: Verdict, exc: Exception) -> None:
        """A commit or release that failed: one that met an outage is tried again once the store
        answers (or at close); any other failure is counted."""
        if isinstance(exc, StoreLost):
            self.stop_crawl(STORE_LOST)
        elif isinstance(exc, StoreUnavailable) and not self.closing:
            self.unsettled.append((action, verdict))
            return
        self.log.inc("commit_error")
        self.log.once("commit_error", logging.ERROR, "Store error %s %s: %s", action, verdict.key, exc)

    def retry_unsettled(self, reservations: Reservations) -> None:
        """Commit or release again the documents whose call met an outage."""
        unsettled, self.unsettled = self.unsettled, []
        for action, verdict in unsettled:
            reservations.retry(action, verdict)

    def close(self, reservations: Reservations) -> None:
        """The spider closes: one last try; what fails now is counted neardup/commit_error."""
        self.closing = True
        self.retry_unsettled(reservations)

    def crawl_closing(self) -> bool:
        """The crawl is closing (stopped here, Scrapy's shutdown, or the engine closing the
        spider): items stop waiting for the store."""
        if self.stopping or self.closing:
            return True
        engine = self._engine()
        if engine is None:  # a pipeline opened by hand: nothing closes it but close_spider
            return False
        if not engine.running:  # Scrapy's shutdown (SIGTERM, Ctrl-C)
            return True
        slot = getattr(engine, "_slot", None) or getattr(engine, "slot", None)  # Scrapy >= 2.13, older
        return getattr(slot, "closing", None) is not None

    def stop_crawl(self, reason: str) -> None:
        """Close the spider (once): going on without the store's memory keeps every reprint."""
        if self.stopping:
            return
        self.stopping = True
        engine = self._engine()
        if engine is None:  # a pipeline opened by hand: no crawl to stop
            return
        if hasattr(engine, "close_spider_async"):  # Scrapy >= 2.14
            from scrapy.utils.defer import deferred_from_coro

            deferred_from_coro(engine.close_spider_async(reason=reason))
        else:
            engine.close_spider(self.crawler.spider, reason)

    def _engine(self) -> Any:
        """The crawl's engine; None for a pipeline opened by hand, outside a crawl."""
        try:
            return self.crawler.engine
        except RuntimeError:  # Scrapy >= 2.19 before the crawl starts
            return None
