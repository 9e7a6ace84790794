"""The crawl tests' site: the small news world served on 127.0.0.1, and the spiders, items and
pipelines that crawl it. It does not import pytest: the spiders here run in ``scrapy crawl``
processes too, whose start would pay for it (the ``local_site`` fixture is in conftest.py).

The world itself (three sites, seven stories, reprints and bad pages placed by hand) is
``newsworld.small`` in the example project; ``ARTICLES`` and ``REPRINT_OF`` are its truth.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import attrs
import scrapy

from scrapy_neardup.newsworld import serve, small_world
from scrapy_neardup.newsworld.small import ARTICLES, REPRINT_OF  # noqa: F401 (the tests' truth about the world)


def nested_page() -> bytes:
    """About 11 MB of divs nested 200 deep, each with a paragraph and a link: extraction spends
    about four seconds of a core on it (time that grows with the size; readability's score and
    its clean-up visit every paragraph and its ancestors)."""
    unit = '<div><p>段落文字内容，这是一段比较长的正文。<a href="/x">链接</a></p>'
    block = unit * 200 + "</div>" * 200
    head = '<html><head><meta charset="utf-8"></head><body>'
    return (head + block * 600 + "</body></html>").encode("utf-8")


# The stories a roundup page of another site carries in full, before they are crawled.
ROUNDUP_OF = ["/a/metro.html", "/a/canteen.html", "/a/oranges.html"]


def roundup_page(pages: dict[str, Any]) -> bytes:
    """A morning roundup on a site of its own that carries the stories of ROUNDUP_OF in full,
    each under its headline: seen first, it must not make those stories its duplicates."""
    parts = ["<p>【早报】今日要闻速览，编辑为您精选昨日本地新闻。</p>"]
    for path in ROUNDUP_OF:
        page = pages[path].decode("utf-8") if isinstance(pages[path], bytes) else pages[path]
        title = re.search(r"<h1>(.*?)</h1>", page).group(1)
        body = re.search(r'<div class="content">(.*?)</div>', page, re.S).group(1)
        paragraphs = [p for p in re.findall(r"<p>.*?</p>", body, re.S) if "版权" not in p]  # not the site notice
        parts += [f"<p>【{title}】</p>", *paragraphs]
    parts.append("<p>以上为今日要闻，明天见。</p>")
    return (
        '<!DOCTYPE html>\n<html lang="zh-CN"><head><meta charset="utf-8"><title>今日要闻 - 晨报网</title></head>\n'
        '<body><div class="main"><article><h1>今日要闻速览</h1><div class="content">\n'
        + "\n".join(parts)
        + "\n</div></article></div></body></html>"
    ).encode("utf-8")


class LocalSite:
    """The small news world (``newsworld.small_world()``) on ``127.0.0.1:<free port>``, in a
    background thread, with ``/bad/nested.html`` (:func:`nested_page`) beside it."""

    def __enter__(self) -> LocalSite:
        world = small_world()
        extra = {"/bad/nested.html": nested_page(), "/hostile/roundup.html": roundup_page(world.pages)}
        world = dataclasses.replace(world, pages={**world.pages, **extra})
        self.server, base_url = serve(world)
        self.root = base_url.rstrip("/")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return self.root + path


# -- items and spiders for crawl tests -------------------------------------------------------


class ArticleItem(scrapy.Item):
    """An item class that declares the tag fields, as the README shows."""

    url = scrapy.Field()
    html = scrapy.Field()
    text = scrapy.Field()
    duplicate_of = scrapy.Field()
    similar_id = scrapy.Field()


class PlainItem(scrapy.Item):
    """An item class without the tag fields: tag mode warns once and passes it untagged."""

    url = scrapy.Field()
    html = scrapy.Field()
    text = scrapy.Field()


@dataclasses.dataclass
class ArticleData:
    url: str
    html: Any = None
    text: Any = None
    duplicate_of: str | None = None
    similar_id: int | None = None


@attrs.define
class ArticleAttrs:
    url: str
    html: Any = None
    text: Any = None
    duplicate_of: str | None = None
    similar_id: int | None = None


ITEM_TYPES: dict[str, Any] = {
    "dict": dict,
    "item": ArticleItem,
    "plain": PlainItem,
    "dataclass": ArticleData,
    "attrs": ArticleAttrs,
}


def _paths(value: Any) -> list[str]:
    return [p for p in value.split(",") if p] if isinstance(value, str) else list(value)


class NewsSpider(scrapy.Spider):
    """Crawls the given paths of the local world and yields one item per page.

    ``order="chain"`` fetches one page after the other (the next request is yielded after
    the item), so which copy comes first is known; ``order="all"`` fetches them at once.
    ``mode`` chooses the item content: ``html`` (response.text), ``bytes`` (response.body)
    or ``text`` (the spider extracts with scrapy_neardup.extract_text).
    """

    name = "news"

    def __init__(
        self,
        root: str = "",
        paths: Any = (),
        item: str = "dict",
        mode: str = "html",
        order: str = "chain",
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.root = root
        self.page_paths = _paths(paths)
        self.item_cls = ITEM_TYPES[item]
        self.mode = mode
        self.order = order

    async def start(self) -> AsyncIterator[Any]:
        for request in self.start_requests():
            yield request

    def start_requests(self) -> Iterator[scrapy.Request]:
        if self.order == "chain":
            if self.page_paths:
                yield self._request(0)
        else:
            for index in range(len(self.page_paths)):
                yield self._request(index)

    def _request(self, index: int) -> scrapy.Request:
        return scrapy.Request(self.root + self.page_paths[index], cb_kwargs={"index": index}, dont_filter=True)

    def parse(self, response: Any, index: int) -> Iterator[Any]:
        yield self.make_item(response)
        if self.order == "chain" and index + 1 < len(self.page_paths):
            yield self._request(index + 1)

    def make_item(self, response: Any) -> Any:
        if self.mode == "text":
            from scrapy_neardup.fingerprints.extract import extract_text

            fields = {"url": response.url, "text": extract_text(response)}
        elif self.mode == "bytes":
            fields = {"url": response.url, "html": response.body}
        else:
            fields = {"url": response.url, "html": response.text}
        return self.item_cls(**fields)


class BadItemsSpider(scrapy.Spider):
    """Fetches the bad pages of the world and yields every kind of unusable item."""

    name = "bad_items"

    def __init__(self, root: str = "", item: str = "dict", **kwargs: Any):
        super().__init__(**kwargs)
        self.root = root
        self.item_cls = ITEM_TYPES[item]

    async def start(self) -> AsyncIterator[Any]:
        for request in self.start_requests():
            yield request

    def start_requests(self) -> Iterator[scrapy.Request]:
        yield scrapy.Request(self.root + "/a/robots.html", callback=self.parse_robots)

    def parse_robots(self, response: Any) -> Iterator[Any]:
        url = response.url
        new = self.item_cls
        yield new(url=url, html=response.text)  # the only real article: unique
        yield {"url": url + "#no-fields"}  # neither text nor html
        yield new(url=url + "#none", text=None, html=None)
        yield new(url=url + "#blank", text="   \n ", html="")
        yield new(url=url + "#int", text=12345)
        yield new(url=url + "#bytes-text", text=response.body)  # bytes in the text field
        yield new(url=url + "#list", html=["<p>not", "a string</p>"])
        yield new(url=url + "#explode", html="<p>EXPLODE</p>" + response.text)
        yield {"text": "短文本"}  # no key field, short text
        yield scrapy.Request(self.root + "/bad/binary.html", callback=self.parse_bad)

    def parse_bad(self, response: Any) -> Iterator[Any]:
        yield self.item_cls(url=response.url, html=response.text)  # binary junk decoded as text
        yield scrapy.Request(self.root + "/bad/binary.png", callback=self.parse_next)

    def parse_next(self, response: Any) -> Iterator[Any]:
        path = "/" + response.url.split("/", 3)[3]
        if path == "/bad/binary.png":
            yield self.item_cls(url=response.url, html=response.body)  # raw image bytes
            yield scrapy.Request(self.root + "/bad/huge.html", callback=self.parse_next)
        elif path == "/bad/huge.html":
            yield self.item_cls(url=response.url, html=response.text)  # 50 MB
            yield scrapy.Request(self.root + "/bad/empty.html", callback=self.parse_next)
        elif path == "/bad/empty.html":
            yield self.item_cls(url=response.url, html=response.text)  # a page without text
            yield scrapy.Request(self.root + "/bad/broken.html", callback=self.parse_next)
        else:
            yield self.item_cls(url=response.url, html=response.text)  # broken markup, a reprint


class DropLaterPipeline:
    """A pipeline after NearDupPipeline that drops, fails or delays chosen items.

    The spider names them: ``drop_later`` (drop), ``fail_later`` (raise), and
    ``delay_later`` (seconds to wait before dropping, so a copy arrives meanwhile).
    """

    def __init__(self, crawler: Any):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> DropLaterPipeline:
        return cls(crawler)

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        from itemadapter import ItemAdapter
        from scrapy.exceptions import DropItem

        spider = self.crawler.spider
        path = "/" + str(ItemAdapter(item).get("url", "")).split("/", 3)[-1]
        delay = getattr(spider, "delay_later", {}).get(path)
        if delay:
            from scrapy.utils.defer import maybe_deferred_to_future
            from twisted.internet import reactor
            from twisted.internet.task import deferLater

            await maybe_deferred_to_future(deferLater(reactor, delay, lambda: None))
            raise DropItem(f"dropped later, after {delay} s: {path}")
        if path in getattr(spider, "drop_later", ()):
            raise DropItem(f"dropped later: {path}")
        if path in getattr(spider, "fail_later", ()):
            raise RuntimeError(f"storage failed for {path}")
        return item


# -- extractors named by dotted path in tests (importable by worker processes) -----------------


def exploding_extractor(html: str) -> str:
    """Like the default extractor, but raises for pages that contain a marker."""
    if "EXPLODE" in html:
        raise RuntimeError("extractor failed on purpose")
    from scrapy_neardup.fingerprints.extract import html_to_text

    return html_to_text(html)


def crashing_extractor(html: str) -> str:
    """Kills the worker process it runs in for pages that contain a marker (out of memory, say)."""
    if "CRASH" in html:
        import os

        os._exit(3)
    from scrapy_neardup.fingerprints.extract import html_to_text

    return html_to_text(html)


def niceness_logging_extractor(html: str) -> str:
    """Notes the process it runs in and that process's nice value in $NEARDUP_TEST_NICE_LOG."""
    import os

    from scrapy_neardup.fingerprints.extract import html_to_text

    with open(os.environ["NEARDUP_TEST_NICE_LOG"], "a", encoding="ascii") as log:
        log.write(f"{os.getpid()} {os.nice(0)}\n")
    return html_to_text(html)


class CrashSpider(NewsSpider):
    """Yields one page whose extraction kills its worker between normal pages."""

    name = "crash"

    def make_item(self, response: Any) -> Any:
        item = super().make_item(response)
        if response.url.endswith("/b/canteen.html"):
            item["html"] = "<p>CRASH</p>" + item["html"]
        return item


class MovedSpider(NewsSpider):
    """Yields some pages under the URL of another (``moved``: "/served.html=/key.html,..."):
    the page at that URL changed since the last crawl, it now tells another story."""

    name = "moved"

    def __init__(self, moved: str = "", **kwargs: Any):
        super().__init__(**kwargs)
        self.moved = dict(pair.split("=") for pair in moved.split(",") if pair)

    def make_item(self, response: Any) -> Any:
        item = super().make_item(response)
        served = "/" + response.url.split("/", 3)[3]
        if served in self.moved:
            item["url"] = self.root + self.moved[served]
        return item


class UpdatedSpider(NewsSpider):
    """Yields the pages named in ``updated`` ("/a.html,/b.html") with two sentences added at
    the end of their article: the page was updated since the last crawl."""

    name = "updated"
    ADDED = (
        "<p>记者当天下午再次来到城东客运站，看到换乘通道内仍有不少乘客排队进站。"
        "轨道交通集团表示，下周起将在早高峰加开三趟区间车。</p>"
    )

    def __init__(self, updated: str = "", **kwargs: Any):
        super().__init__(**kwargs)
        self.updated = set(filter(None, updated.split(",")))

    def make_item(self, response: Any) -> Any:
        item = super().make_item(response)
        if "/" + response.url.split("/", 3)[3] in self.updated:
            item["html"] = item["html"].replace("</div></article>", self.ADDED + "</div></article>")
        return item
