"""A small extension for runs that start crawls as processes and read their stats back."""

from __future__ import annotations

import json
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured


class StatsFile:
    """Writes the crawl's stats as JSON to ``STATS_FILE`` when the spider closes.

    A process that starts ``scrapy crawl`` cannot read the crawler's stats object; a file can.
    """

    def __init__(self, crawler: Any, path: str):
        self.crawler = crawler
        self.path = path

    @classmethod
    def from_crawler(cls, crawler: Any) -> StatsFile:
        path = crawler.settings.get("STATS_FILE")
        if not path:
            raise NotConfigured("STATS_FILE is not set")
        extension = cls(crawler, path)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self, spider: Any, reason: str) -> None:
        stats = dict(self.crawler.stats.get_stats(), finish_reason=reason)
        with open(self.path, "w", encoding="utf-8") as handle:
            json.dump(stats, handle, default=str, ensure_ascii=False)
