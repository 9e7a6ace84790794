"""When a crawl's worker processes start: as early as Scrapy lets us, as the first item waits
for a ready worker (its imports and its tables).

The pipeline starts them in its ``from_crawler``, which Scrapy calls after building its
extensions and its downloader. The add-on also puts :class:`StartWorkers` first in
``EXTENSIONS``: Scrapy builds extensions right after it installs the reactor, before the rest
of its start, and the pipeline takes the pool started there (:func:`start_pool`).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from .settings import NearDupConfig
from .workers import WorkerPool, can_pickle_extractor

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

# Before Scrapy's own extensions (order 0 and up): the ones after it import and start much
# (Scrapy 2.19's remote control imports aiohttp).
EXTENSION_ORDER = -1000
EXTENSION_PATH = f"{__name__}.StartWorkers"

# A pool StartWorkers started, and the arguments it was started with, until the pipeline takes it.
_started: weakref.WeakKeyDictionary[Crawler, tuple[tuple, WorkerPool]] = weakref.WeakKeyDictionary()


def pool_arguments(config: NearDupConfig) -> tuple | None:
    """What the pool of a crawl with ``config`` is started with; None when its pages are
    prepared in the crawler itself (no workers, or an extractor they cannot import)."""
    if not config.workers or not can_pickle_extractor(config.extractor):
        return None
    # Without the body back the crawler reads only the fingerprint, which it does faster.
    needs_text = bool(config.text_out_field or config.keep_text or config.related or config.report)
    return (
        config.workers,
        config.recipe(),  # as the settings give it: each worker resolves it (no numpy here)
        config.extractor,
        config.worker_niceness,
        config.extract_timeout or None,
        needs_text,
    )


def start_pool(crawler: Crawler, config: NearDupConfig) -> WorkerPool | None:
    """The crawl's pool: the one :class:`StartWorkers` started, if it was started for the same
    settings (an extension built after it could have changed them), or a new one."""
    arguments = pool_arguments(config)
    early = _started.pop(crawler, None)
    if early is not None:
        if early[0] == arguments:
            return early[1]
        early[1].close()
    return WorkerPool(*arguments) if arguments is not None else None


class StartWorkers:
    """Starts the crawl's workers as Scrapy builds its extensions (the add-on enables it).
    Whatever stops it here (a bad setting, no workers) is left to the pipeline to say."""

    def __init__(self, crawler: Crawler, pool: WorkerPool):
        self.crawler = crawler
        self.pool = pool
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StartWorkers:
        if not getattr(crawler, "crawling", False):  # a look at the settings, not a crawl
            raise NotConfigured
        try:
            config = NearDupConfig.from_settings(crawler.settings, getattr(crawler, "spider", None))
            arguments = pool_arguments(config) if config.enabled else None
            if arguments is None:
                raise NotConfigured
            pool = WorkerPool(*arguments)
        except Exception:  # the pipeline reads the settings again, and says what is wrong
            raise NotConfigured from None
        _started[crawler] = (arguments, pool)
        return cls(crawler, pool)

    def engine_stopped(self, **kwargs: Any) -> None:
        """A pool the pipeline never took (it stopped the crawl first) stops with the crawl."""
        early = _started.pop(self.crawler, None)
        if early is not None:
            early[1].close()
