"""When the pipeline cannot serve the crawl: a crawl stopped before it starts, and a store that
fails during it.

**At open.** A bad ``NEARDUP_*`` value or a store that cannot be opened is for the user to fix
before anything is crawled. Raising an exception would stop the crawl, but Scrapy then prints
the message inside a page of asyncio or Twisted traceback, and (depending on the Scrapy version
and the command) still exits with status 0. So the pipeline logs the reason once and closes the
spider itself before it fetches a page, once every component of the crawl has opened: Scrapy
closes every item pipeline when the spider closes, opened or not, so a pipeline after this one
that a stop in ``open_spider`` kept from opening would be closed without having been opened (a
storage pipeline's ``close_spider`` then fails on state its ``open_spider`` never made, with a
traceback). The stop waits for ``spider_opened``, which Scrapy sends once every pipeline is
open: Scrapy >= 2.18 takes a ``CloseSpider`` raised there (the engine never starts); older
versions pause the engine at open and close the spider as soon as the engine runs. Every
component thus sees what an empty crawl shows it: opened, no item, closed. ``scrapy crawl``
exits with status 1 when a crawl ends without a spider (what Scrapy calls a failed bootstrap),
so the crawler's spider is let go once it is closed.

**During the crawl.** Going on without the store's memory would keep every reprint, and
dropping an item that was never checked would lose data; so an item whose check meets a store
that is down waits and tries again (:meth:`StoreCalls.wait_to_retry`): a short outage (a
restart, a failover) costs time, not reprints. Past ``NEARDUP_STORE_DOWN_TIMEOUT``, or once the
crawl is closing, the item passes unchecked, counted, and the crawl stops. A store that lost its
data stops the crawl at once. Commits and releases that met an outage are tried again once the
store answers, and a last time at close.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider

from ..engine.verdicts import Verdict
from ..stores import StoreError, StoreFormatError, StoreOptionError, StoreUnavailable
from ..stores.errors import StoreLost
from .compat import CLOSE_SPIDER_AT_OPEN, close_spider, engine_of, installed_reactor, spider_closing
from .runlog import RunLog
from .storecalls import StoreCalls

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.core.engine import ExecutionEngine
    from scrapy.crawler import Crawler

    from .reservations import Reservations

__all__ = [
    "BAD_SETTING",
    "STORE_DOWN",
    "STORE_FORMAT",
    "STORE_LOST",
    "STORE_UNAVAILABLE",
    "CrawlStopper",
    "Outages",
    "open_failure",
    "stop_at_open",
]

# finish_reason of a crawl the pipeline stopped
BAD_SETTING = "neardup_bad_setting"
STORE_UNAVAILABLE = "neardup_store_unavailable"
STORE_FORMAT = "neardup_store_format"
STORE_DOWN = "neardup_store_down"  # mid-crawl: the store stayed down past NEARDUP_STORE_DOWN_TIMEOUT
STORE_LOST = "neardup_store_lost"  # mid-crawl: the store lost its data


# -- at open ---------------------------------------------------------------------------------


def stop_at_open(crawler: Crawler, reason: str) -> None:
    """Called from ``open_spider``: close the spider with ``reason`` before it fetches a page,
    once every component has opened (see above).

    Raises ``CloseSpider`` at once when no engine runs the spider (a pipeline opened by hand);
    returns otherwise.
    """

    def release_spider(spider: Spider, **kwargs: Any) -> None:
        if getattr(crawler, "spider", None) is spider:
            crawler.spider = None  # Scrapy's mark of a crawl that failed to start: exit status 1

    engine = engine_of(crawler)
    if engine is None:
        raise CloseSpider(reason)
    crawler.signals.connect(release_spider, signal=signals.spider_closed, weak=False)
    if CLOSE_SPIDER_AT_OPEN:

        def stop_once_open(**kwargs: Any) -> None:
            crawler.signals.disconnect(stop_once_open, signal=signals.spider_opened)
            raise CloseSpider(reason)

        crawler.signals.connect(stop_once_open, signal=signals.spider_opened, weak=False)
        return
    engine.pause()

    def close_once_running(**kwargs: Any) -> None:
        # engine_started is sent just before the engine counts as running; the close must
        # come after, or stopping the engine fails and the crawl never ends.
        reactor = installed_reactor()

        crawler.signals.disconnect(close_once_running, signal=signals.engine_started)
        reactor.callLater(0, _close_if_open, engine, reason)

    crawler.signals.connect(close_once_running, signal=signals.engine_started, weak=False)


def _close_if_open(engine: ExecutionEngine, reason: str) -> None:
    if engine.spider is not None:  # not closed meanwhile (the crawl was stopped)
        close_spider(engine, reason)


def open_failure(exc: Exception) -> tuple[str, str]:
    """The finish reason and the message of a store that could not be opened. A store class
    registered in NEARDUP_STORES may fail in any way: it is told in one line all the same."""
    if isinstance(exc, StoreFormatError):
        return STORE_FORMAT, str(exc)
    if isinstance(exc, StoreOptionError):
        return BAD_SETTING, str(exc)
    if isinstance(exc, StoreError):
        return STORE_UNAVAILABLE, str(exc)
    return STORE_UNAVAILABLE, f"{type(exc).__name__}: {exc}"


class CrawlStopper:
    """Stands in for the pipeline when its settings are wrong: stops the crawl at open.

    ``from_crawler`` runs while Scrapy builds the engine, too early to close a spider.
    """

    def __init__(self, crawler: Crawler, reason: str):
        self.crawler = crawler
        self.reason = reason

    def open_spider(self, spider: Spider | None = None) -> None:
        stop_at_open(self.crawler, self.reason)

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        return item  # only items a spider yields before the close (Scrapy < 2.18)


# -- during the crawl ------------------------------------------------------------------------


class Outages:
    """The failures of one pipeline's store calls, and the stop of its crawl."""

    def __init__(self, crawler: Crawler, calls: StoreCalls, log: RunLog):
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
        engine = engine_of(self.crawler)
        if engine is None:  # a pipeline opened by hand: nothing closes it but close_spider
            return False
        return spider_closing(engine)

    def stop_crawl(self, reason: str) -> None:
        """Close the spider (once): going on without the store's memory keeps every reprint."""
        if self.stopping:
            return
        self.stopping = True
        engine = engine_of(self.crawler)
        if engine is not None:  # None: a pipeline opened by hand, no crawl to stop
            close_spider(engine, reason)
