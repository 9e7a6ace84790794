"""A generic news spider: follows every link of the news world, yields url + title + html.

It knows nothing about the five sites' templates: a page whose ``og:type`` is ``article``
is an article, and its whole HTML goes into the item. Finding the article text in it is
left to NearDupPipeline (readability-lxml), which is the point of the example.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Response


class NewsSpider(scrapy.Spider):
    """Crawls the news world; reprints are dropped by the pipeline (the project default)."""

    name = "news"

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> NewsSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        base_url = kwargs.get("base_url") or crawler.settings.get("NEWS_BASE_URL")
        if not base_url:
            raise ValueError("give the news world's address: -a base_url=http://127.0.0.1:8000/ or NEWS_BASE_URL")
        spider.base_url = base_url
        spider.start_urls = [base_url]
        spider.netloc = urlsplit(base_url).netloc
        return spider

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        if response.css('meta[property="og:type"]::attr(content)').get() == "article":
            yield {
                "url": response.url,
                "title": (
                    response.css('meta[property="og:title"]::attr(content)').get()
                    or response.css("h1::text").get(default="")
                ).strip(),
                "html": response.text,
            }
        for href in response.css("a::attr(href)").getall():
            if href.startswith(("javascript:", "#", "mailto:")):
                continue
            url = response.urljoin(href)
            if urlsplit(url).netloc == self.netloc:
                yield response.follow(url, callback=self.parse)


class TaggedNewsSpider(NewsSpider):
    """The same crawl, configured per spider: reprints are kept and tagged, not dropped.

    ``custom_settings`` is how Scrapy 2.14+ wants a spider configured. Its own namespace
    keeps its documents apart from the ``news`` spider's in the shared store.
    """

    name = "news_tagged"
    custom_settings = {
        "NEARDUP_ACTION": "tag",
        "NEARDUP_NAMESPACE": "tagged",
        "FEEDS": {
            "output/tagged.jsonl": {
                "format": "jsonlines",
                "encoding": "utf-8",
                "overwrite": True,
                "fields": ["url", "title", "duplicate_of", "similar_id", "replaces"],
            },
        },
    }
