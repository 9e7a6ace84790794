"""Stopping a crawl the pipeline cannot serve: one ERROR line, no page fetched, exit status 1.

A bad ``NEARDUP_*`` value or a store that cannot be opened is for the user to fix before
anything is crawled. Raising an exception would stop the crawl, but Scrapy then prints the
message inside a page of asyncio or Twisted traceback, and (depending on the Scrapy version
and the command) still exits with status 0. So the pipeline logs the reason once and closes
the spider itself before it fetches a page:

- Scrapy >= 2.18 lets ``open_spider`` raise ``CloseSpider``: the engine never starts;
- older versions pause the engine at open (nothing is downloaded) and close the spider as
  soon as the engine runs.

The spider is closed with a reason of its own (``finish_reason`` in the stats). ``scrapy
crawl`` and ``scrapy runspider`` exit with status 1 when a crawl ends without a spider (what
Scrapy calls a failed bootstrap; ``CrawlerProcess.bootstrap_failed`` in a script), so the
crawler's spider is let go once it is closed.
"""

from __future__ import annotations

from typing import Any

from scrapy import signals
from scrapy.exceptions import CloseSpider

try:
    from scrapy import version_info as _SCRAPY_VERSION
except ImportError:  # pragma: no cover
    _SCRAPY_VERSION = (2, 0, 0)

__all__ = ["BAD_SETTING", "STORE_DOWN", "STORE_FORMAT", "STORE_LOST", "STORE_UNAVAILABLE", "CrawlStopper", "stop_at_open"]

# finish_reason of a crawl the pipeline stopped
BAD_SETTING = "neardup_bad_setting"
STORE_UNAVAILABLE = "neardup_store_unavailable"
STORE_FORMAT = "neardup_store_format"
STORE_DOWN = "neardup_store_down"  # mid-crawl: the store stayed down past NEARDUP_STORE_DOWN_TIMEOUT
STORE_LOST = "neardup_store_lost"  # mid-crawl: the store lost its data

_CLOSE_SPIDER_AT_OPEN = tuple(_SCRAPY_VERSION[:2]) >= (2, 18)


def stop_at_open(crawler: Any, reason: str) -> None:
    """Called from ``open_spider``: close the spider with ``reason`` before it fetches a page.

    Raises ``CloseSpider`` on Scrapy >= 2.18, or when no engine runs the spider (a pipeline
    opened by hand); returns at once otherwise.
    """

    def release_spider(spider: Any, **kwargs: Any) -> None:
        if getattr(crawler, "spider", None) is spider:
            crawler.spider = None  # Scrapy's mark of a crawl that failed to start: exit status 1

    crawler.signals.connect(release_spider, signal=signals.spider_closed, weak=False)
    try:
        engine = getattr(crawler, "engine", None)
    except RuntimeError:  # Scrapy >= 2.19 before the crawl starts: no engine runs the spider
        engine = None
    if _CLOSE_SPIDER_AT_OPEN or engine is None:
        raise CloseSpider(reason)
    engine.pause()

    def close_once_running(**kwargs: Any) -> None:
        # engine_started is sent just before the engine counts as running; the close must
        # come after, or stopping the engine fails and the crawl never ends.
        from twisted.internet import reactor

        crawler.signals.disconnect(close_once_running, signal=signals.engine_started)
        reactor.callLater(0, _close, engine, reason)

    crawler.signals.connect(close_once_running, signal=signals.engine_started, weak=False)


def _close(engine: Any, reason: str) -> None:
    if engine.spider is None:
        return  # already closed (the crawl was stopped meanwhile)
    if hasattr(engine, "close_spider_async"):  # Scrapy >= 2.14 deprecates close_spider()
        from scrapy.utils.defer import deferred_from_coro

        deferred_from_coro(engine.close_spider_async(reason=reason))
    else:
        engine.close_spider(engine.spider, reason)


class CrawlStopper:
    """Stands in for the pipeline when its settings are wrong: stops the crawl at open.

    ``from_crawler`` runs while Scrapy builds the engine, too early to close a spider.
    """

    def __init__(self, crawler: Any, reason: str):
        self.crawler = crawler
        self.reason = reason

    def open_spider(self, spider: Any = None) -> None:
        stop_at_open(self.crawler, self.reason)

    def process_item(self, item: Any, spider: Any = None) -> Any:
        return item  # only items a spider yields before the close (Scrapy < 2.18)
