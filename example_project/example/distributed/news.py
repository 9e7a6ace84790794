"""The news spider, fed by scrapy-redis: start pages come from a Redis list, and every page
it finds goes to the queue that all processes share."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import scrapy
from scrapy.exceptions import DontCloseSpider
from scrapy_redis.spiders import RedisMixin

from example.spiders.news import NewsSpider


class DistributedNewsSpider(RedisMixin, NewsSpider):
    """``news`` with its start pages read from ``news_distributed:start_urls`` in Redis.

    ``base_url`` (``-a base_url=...`` or ``NEWS_BASE_URL``) still says which host to stay on;
    the pages to start from are pushed to Redis (``run_distributed.py`` does it).
    """

    name = "news_distributed"
    redis_batch_size = 1  # start pages taken one at a time, so that every process gets some
    idle_since: float | None = None

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> DistributedNewsSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.setup_redis(crawler)
        return spider

    def parse(self, response: Any, **kwargs: Any) -> Any:
        self.idle_since = None
        yield from super().parse(response, **kwargs)

    def spider_idle(self) -> None:
        """Close after ``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds without work, counted from this
        process's last page (scrapy-redis counts from its import, so a process whose start-up
        took that long closed before its first page)."""
        self.schedule_next_requests()
        now = time.monotonic()
        if self.idle_since is None:
            self.idle_since = now
        if not self.max_idle_time or now - self.idle_since < self.max_idle_time:
            raise DontCloseSpider

    async def start(self) -> AsyncIterator[Any]:
        """Scrapy 2.13+ starts from ``start()``, which by default reads ``start_urls``: read
        the start pages from Redis instead, as older Scrapy does through ``start_requests``."""
        for request in self.start_requests():
            yield request

    def make_request_from_data(self, data: bytes) -> scrapy.Request:
        """A start page pushed as JSON (``{"url": ...}``), filtered like every other page.

        scrapy-redis's own start requests skip the shared filter, so a start page that another
        process reaches by a link would be fetched twice.
        """
        return scrapy.Request(json.loads(data)["url"], callback=self.parse)
