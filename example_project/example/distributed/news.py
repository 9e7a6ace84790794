"""The news spider, fed by scrapy-redis: start pages come from a Redis list, and every page
it finds goes to the queue that all processes share."""

from __future__ import annotations

import json
import time
from typing import Any, AsyncIterator

import scrapy
from scrapy_redis.spiders import RedisMixin

from example.spiders.news import NewsSpider


class DistributedNewsSpider(RedisMixin, NewsSpider):
    """``news`` with its start pages read from ``news_distributed:start_urls`` in Redis.

    ``base_url`` (``-a base_url=...`` or ``NEWS_BASE_URL``) still says which host to stay on;
    the pages to start from are pushed to Redis (``run_distributed.py`` does it).
    """

    name = "news_distributed"

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> "DistributedNewsSpider":
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.setup_redis(crawler)
        spider.spider_idle_start_time = int(time.time())  # scrapy-redis sets it once, at import
        return spider

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
