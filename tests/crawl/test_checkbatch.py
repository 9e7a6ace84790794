"""Items that reach the pipeline together share Redis round trips, with the verdicts and the
commit rules of checking them one at a time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_twisted
import scrapy
from support.crawls import LATER, run, settings_for
from support.news_corpus import corpus

URLS = [(key.replace("https://", "https://news.example/"), story) for key, story, _ in corpus()]


class ManyItemsSpider(scrapy.Spider):
    """One page whose callback yields the whole test corpus at once: originals, four reprints
    of each, and distinct stories ending in the same disclaimer."""

    name = "many"

    def __init__(self, root: str = "", **kwargs: Any):
        super().__init__(**kwargs)
        self.root = root

    async def start(self) -> AsyncIterator[Any]:
        for request in self.start_requests():
            yield request

    def start_requests(self) -> Iterator[scrapy.Request]:
        yield scrapy.Request(self.root + "/a/metro.html", dont_filter=True)

    def parse(self, response: Any, **kwargs: Any) -> Iterator[dict]:
        for (url, _), (_, _, text) in zip(URLS, corpus()):
            yield {"url": url, "text": text}


def _tags(result: Any) -> list[tuple[str, Any]]:
    return sorted((item["url"], item.get("duplicate_of")) for item in result.items)


@pytest.mark.parametrize("thread", [False, True], ids=["store-inline", "store-thread"])
@pytest_twisted.inlineCallbacks
def test_items_arriving_together_share_round_trips_and_get_the_verdicts_of_one_by_one(
    local_site, tmp_path, redis_url, thread
):
    settings = settings_for(redis_url, NEARDUP_ACTION="tag", NEARDUP_STORE_THREAD=thread)
    on_redis = yield run(settings, ManyItemsSpider, root=local_site.root)
    on_leveldb = yield run(
        settings_for(tmp_path / "store", NEARDUP_ACTION="tag"), ManyItemsSpider, root=local_site.root
    )
    assert _tags(on_redis) == _tags(on_leveldb)
    first_of = {}
    for url, story in URLS:
        first_of.setdefault(story, url)
    assert _tags(on_redis) == sorted((url, None if first_of[story] == url else first_of[story]) for url, story in URLS)
    items = on_redis.neardup["neardup/items"]
    assert items == len(URLS)
    assert 1 <= on_redis.neardup["neardup/check_round_trips"] < items / 2
    assert "neardup/check_round_trips" not in on_leveldb.neardup  # a local store is called per item


@pytest_twisted.inlineCallbacks
def test_a_first_copy_dropped_later_in_a_batch_hands_its_story_to_the_next_copy(local_site, redis_url):
    """The commit rules hold in a batch: the reprints checked with the first copy wait for its
    fate, and when a later pipeline drops it the next copy becomes the story's first copy."""
    dropped_first = URLS[0][0]  # the first original; its four reprints come later in the corpus

    class Spider(ManyItemsSpider):
        drop_later = {"/" + dropped_first.split("/", 3)[3]}

    result = yield run(settings_for(redis_url, **LATER), Spider, root=local_site.root)
    story = URLS[0][1]
    copies = [url for url, s in URLS if s == story]
    kept = [item["url"] for item in result.items]
    assert [url for url in kept if url in copies] == [copies[1]]
    assert result.neardup["neardup/released"] == 1
    assert result.neardup["neardup/check_round_trips"] < result.neardup["neardup/items"]
    stories_kept = {s for url, s in URLS if url in kept}
    assert stories_kept == {s for _, s in URLS}  # every story kept once
    assert len(kept) == len(stories_kept)
