"""Rules the command line and the crawl share are one rule: each case here goes through
``neardup dedup`` and through a real crawl, and both must give the same answer."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from support.crawls import LEAN

from scrapy_neardup.cli import main
from scrapy_neardup.stores.base import LocalStore
from scrapy_neardup.stores.memory import MemoryStore

# A short story (under 200 content characters) and a copy with four edits: the copy keeps
# enough of the story to be its duplicate at the default containment, and too little at 0.9.
STORY = (
    "市图书馆新馆昨天正式对外开放，首批上架图书二十万册，馆内设有少儿阅读区、自习区和数字阅读"
    "体验区，市民凭身份证即可免费办理借阅证，每人最多可借十本。"
)
EDITED = (
    STORY.replace("二十万册", "三十万册").replace("十本", "八本").replace("自习区", "研修区").replace("免费", "无偿")
)
TOO_SHORT = "很短的一句话。"


class TextsSpider(scrapy.Spider):
    """Fetches one page of the local site and yields the given texts as items, in order."""

    name = "texts"

    def __init__(self, root: str = "", texts: str = "[]", **kwargs: Any):
        super().__init__(**kwargs)
        self.root = root
        self.texts = json.loads(texts)

    async def start(self) -> AsyncIterator[Any]:
        for request in self.start_requests():
            yield request

    def start_requests(self) -> Iterator[scrapy.Request]:
        yield scrapy.Request(self.root + "/a/metro.html", dont_filter=True)

    def parse(self, response: Any, **kwargs: Any) -> Iterator[dict]:
        for number, text in enumerate(self.texts):
            yield {"url": f"https://site{number}.example/story", "text": text}


def crawl(site_root: str, texts: list[str], **settings: Any):
    """``yield crawl(...)``: the items that passed and the crawl's stats."""
    runner = CrawlerRunner(
        {
            "ITEM_PIPELINES": {"scrapy_neardup.NearDupPipeline": 200},
            "NEARDUP_WORKERS": 0,
            "LOG_LEVEL": "INFO",
            "TELNETCONSOLE_ENABLED": False,
            **LEAN,
            **settings,
        }
    )
    crawler = runner.create_crawler(TextsSpider)
    passed: list[dict] = []
    crawler.signals.connect(lambda item, **kw: passed.append(item), signal=signals.item_scraped, weak=False)
    done = crawler.crawl(root=site_root, texts=json.dumps(texts, ensure_ascii=False))
    return done.addCallback(lambda _: (passed, crawler.stats.get_stats()))


def dedup(tmp_path: Path, texts: list[str], *options: str) -> list[dict]:
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    lines = [
        json.dumps({"url": f"https://site{n}.example/story", "text": t}, ensure_ascii=False)
        for n, t in enumerate(texts)
    ]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["dedup", str(source), "-o", str(target), "--key-field", "url", "--no-progress", *options]) == 0
    return [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("threshold", [None, "0.9"])
@pytest_twisted.inlineCallbacks
def test_a_raised_threshold_holds_short_texts_to_it_in_both(local_site, tmp_path, threshold):
    options = ["--threshold", threshold] if threshold else []
    records = dedup(tmp_path, [STORY, EDITED], *options)
    settings = {"NEARDUP_STORE": "memory://", "NEARDUP_ACTION": "tag"}
    if threshold:
        settings["NEARDUP_THRESHOLD"] = float(threshold)
    items, _ = yield crawl(local_site.root, [STORY, EDITED], **settings)
    cli_duplicate = records[1]["duplicate_of"] is not None
    crawl_duplicate = items[1]["duplicate_of"] is not None
    assert cli_duplicate == crawl_duplicate == (threshold is None)


@pytest_twisted.inlineCallbacks
def test_a_text_too_short_to_judge_counts_as_not_judged_on_both_review_pages(local_site, tmp_path):
    page = tmp_path / "cli.html"
    dedup(tmp_path, [STORY, TOO_SHORT, EDITED], "--report", str(page))
    crawled = tmp_path / "crawl.html"
    yield crawl(local_site.root, [STORY, TOO_SHORT, EDITED], NEARDUP_STORE="memory://", NEARDUP_REPORT=str(crawled))
    expected = {"duplicate": 1, "not judged": 1, "unique": 1}
    assert verdict_counts(page) == verdict_counts(crawled) == expected


def verdict_counts(page: Path) -> dict[str, int]:
    """The "Verdicts" table of a review page, as a reader sees it: name -> count."""
    html = page.read_text(encoding="utf-8")
    table = html.split("<h2>Verdicts</h2>", 1)[1].split("</table>", 1)[0]
    return {name: int(count) for name, count in re.findall(r"<tr><th>([^<]+)</th><td>(\d+)</td></tr>", table)}


# A store of the user's own on the single-process base, not one of the built-in classes.
OwnStore = type("OwnStore", (LocalStore,), {k: v for k, v in vars(MemoryStore).items() if not k.startswith("__")})
OwnStore.__init__ = MemoryStore.__init__  # type: ignore[misc]


@pytest_twisted.inlineCallbacks
def test_a_local_store_registered_by_the_user_is_called_in_process_not_batched(local_site):
    assert OwnStore.local and not issubclass(OwnStore, MemoryStore)
    _, stats = yield crawl(
        local_site.root,
        [STORY, EDITED],
        NEARDUP_STORE="own://",
        NEARDUP_STORES={"own": f"{__name__}.OwnStore"},
    )
    assert stats["neardup/duplicate"] == 1
    assert "neardup/check_round_trips" not in stats  # batches are for server stores
