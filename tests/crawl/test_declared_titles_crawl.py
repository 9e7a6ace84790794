"""A real crawl of an essay and a portal's excerpt of it over local HTTP: the pipeline reads
each item's headline from NEARDUP_TITLE_FIELD, and the excerpt whose credit line names the
essay's headline (原标题) is dropped as a copy in either order; without headlines it is kept."""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any

import pytest
import pytest_twisted
import scrapy
from itemadapter import ItemAdapter
from support.crawls import run, settings_for, url_path
from support.samestory_texts import ESSAY_TITLE, essay

from scrapy_neardup.newsworld import serve
from scrapy_neardup.newsworld.world import World

PAGES = {
    "/daily/essay.html": (ESSAY_TITLE, essay()),
    "/portal/excerpt.html": ("云岭村茶农的好日子", essay(2)),
}


def _page(title: str, text: str) -> bytes:
    paragraphs = "".join(f"<p>{html.escape(line)}</p>" for line in text.split("\n"))
    return f"<html><head><title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>{paragraphs}</body></html>".encode()


@pytest.fixture
def essay_site() -> Iterator[str]:
    world = World(pages={path: _page(*page) for path, page in PAGES.items()}, start_paths=[], story_of={})
    server, base_url = serve(world)
    try:
        yield base_url.rstrip("/")
    finally:
        server.shutdown()
        server.server_close()


class HeadlinedSpider(scrapy.Spider):
    """Fetches the pages one after the other; each item has the page's text and its headline."""

    name = "headlined"

    def __init__(self, root: str = "", paths: tuple[str, ...] = (), **kwargs: Any):
        super().__init__(**kwargs)
        self.root, self.page_paths = root, list(paths)

    async def start(self) -> Any:
        yield scrapy.Request(self.root + self.page_paths[0], cb_kwargs={"index": 0})

    def parse(self, response: Any, index: int) -> Iterator[Any]:
        yield {
            "url": response.url,
            "headline": response.css("h1::text").get(),
            "text": "\n".join(response.css("p::text").getall()),
        }
        if index + 1 < len(self.page_paths):
            yield scrapy.Request(self.root + self.page_paths[index + 1], cb_kwargs={"index": index + 1})


@pytest.mark.parametrize(
    ("excerpt_first", "title_field", "workers"),
    [
        (True, "headline", 0),
        (False, "headline", 0),
        (True, "headline", 1),
        (False, "headline", 1),
        (True, "", 0),
        (False, "", 0),
    ],
)
@pytest_twisted.inlineCallbacks
def test_the_crawl_judges_an_excerpt_by_the_headline_it_declares(
    essay_site, tmp_path, excerpt_first, title_field, workers
):
    """With worker processes the page is fingerprinted there; its headline joins the check here."""
    paths = tuple(PAGES)[::-1] if excerpt_first else tuple(PAGES)
    settings = settings_for(tmp_path / "store", NEARDUP_TITLE_FIELD=title_field, NEARDUP_WORKERS=workers)
    result = yield run(settings, HeadlinedSpider, root=essay_site, paths=paths)
    kept = [url_path(ItemAdapter(item)["url"]) for item in result.items]
    if title_field:
        assert kept == [paths[0]]
        assert [url_path(ItemAdapter(item)["url"]) for item, _ in result.dropped] == [paths[1]]
        assert result.neardup["neardup/duplicate"] == 1
    else:  # no headlines: the continuity test alone, which the essay's later paragraphs fail
        assert kept == list(paths) and not result.dropped
    assert result.stats["finish_reason"] == "finished"
