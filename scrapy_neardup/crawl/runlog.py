"""What the pipeline tells: counts under ``neardup/`` in Scrapy's stats, and its log lines.

A problem that can come back with every item (a missing field, a failing store) is logged
once, with a hint, so that it does not flood the crawl's log; NEARDUP_DEBUG shows each repeat
at DEBUG. Every line names the spider, as Scrapy's own lines do.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["RunLog"]


class RunLog:
    """The stats and the log of one pipeline (lines go to ``logger``)."""

    def __init__(self, crawler: Crawler, logger: logging.Logger, debug: bool = False):
        self.crawler = crawler
        self.stats = crawler.stats
        self.logger = logger
        self.debug = debug
        self._told: set[Any] = set()

    def inc(self, name: str, count: float = 1) -> None:
        """Add ``count`` to the stat ``neardup/<name>``."""
        self.stats.inc_value(f"neardup/{name}", count)  # type: ignore[arg-type]  # seconds are counted too

    def log(self, level: int, message: str, *args: Any) -> None:
        self.logger.log(level, message, *args, extra={"spider": self.crawler.spider})

    def once(self, kind: Any, level: int, message: str, *args: Any) -> None:
        """Log a problem of ``kind`` once at ``level``; repeats only at DEBUG with NEARDUP_DEBUG."""
        if kind not in self._told:
            self._told.add(kind)
            if not self.debug:
                message += " (no more of these will be shown; set NEARDUP_DEBUG to see all)"
            self.log(level, message, *args)
        elif self.debug:
            self.log(logging.DEBUG, message, *args)
