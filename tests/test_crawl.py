"""Real crawls of the local news world through NearDupPipeline (real HTTP, real LevelDB)."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from itemadapter import ItemAdapter
from local_site import ARTICLES, REPRINT_OF, BadItemsSpider, NewsSpider
from scrapy import signals
from scrapy.crawler import CrawlerRunner

PIPELINE = "scrapy_neardup.NearDupPipeline"
TESTS = Path(__file__).parent

# Timing stats vary from run to run; everything else is compared exactly.
TIMING = {"neardup/extract_seconds"}


@dataclass
class Result:
    items: list[Any] = field(default_factory=list)  # in item_scraped order
    dropped: list[tuple[Any, str]] = field(default_factory=list)  # (item, exception class name)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def neardup(self) -> dict[str, Any]:
        return {k: v for k, v in self.stats.items() if k.startswith("neardup/") and k not in TIMING}

    def paths(self) -> list[str]:
        return [_path(ItemAdapter(item).get("url")) for item in self.items]


def _path(url: str | None) -> str:
    return "/" + url.split("/", 3)[3] if url and url.count("/") >= 3 else str(url)


def settings_for(store: Path | str, **extra: Any) -> dict[str, Any]:
    return {
        "ITEM_PIPELINES": {PIPELINE: 200},
        "NEARDUP_STORE": store if isinstance(store, str) else f"leveldb://{store}",
        "NEARDUP_WORKERS": 0,
        "LOG_LEVEL": "DEBUG",
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": 4,
        "DOWNLOAD_WARNSIZE": 0,
        **extra,
    }


def watch(crawler: Any) -> Result:
    result = Result()
    crawler.signals.connect(lambda item, **kw: result.items.append(item), signal=signals.item_scraped, weak=False)
    crawler.signals.connect(
        lambda item, exception, **kw: result.dropped.append((item, type(exception).__name__)),
        signal=signals.item_dropped,
        weak=False,
    )
    return result


def crawl(runner: CrawlerRunner, spider: type, **kwargs: Any) -> tuple[Any, Result]:
    """Start a crawl on ``runner``; returns its Deferred and the Result it fills."""
    crawler = runner.create_crawler(spider)
    result = watch(crawler)
    deferred = crawler.crawl(**kwargs)
    deferred.addCallback(lambda _: result.stats.update(crawler.stats.get_stats()))
    return deferred, result


def run(settings: dict[str, Any], spider: type, **kwargs: Any):
    """``yield run(...)`` in an inlineCallbacks test: one crawl, its Result."""
    deferred, result = crawl(CrawlerRunner(settings), spider, **kwargs)
    deferred.addCallback(lambda _: result)
    return deferred


def expected_drop_stats(unique: int, duplicate: int, nshash: int, simhash: int = 0, **more: int) -> dict:
    stats = {
        "neardup/items": unique + duplicate + more.pop("passed", 0),
        "neardup/unique": unique,
        "neardup/duplicate": duplicate,
        "neardup/dropped": duplicate,
        "neardup/match/nshash": nshash,
        **({"neardup/match/simhash": simhash} if simhash else {}),
    }
    stats.update({f"neardup/{k}": v for k, v in more.items()})
    return stats


# -- drop and tag over the whole world ----------------------------------------------------------


@pytest.mark.parametrize("workers", [0, 1])
@pytest_twisted.inlineCallbacks
def test_drop_mode_keeps_one_copy_per_story(local_site, tmp_path, workers):
    result = yield run(
        settings_for(tmp_path / "store", NEARDUP_WORKERS=workers),
        NewsSpider,
        root=local_site.root,
        paths=ARTICLES,
    )
    kept = [p for p in ARTICLES if p not in REPRINT_OF]
    assert result.paths() == kept
    assert sorted(_path(ItemAdapter(i)["url"]) for i, _ in result.dropped) == sorted(REPRINT_OF)
    assert {name for _, name in result.dropped} == {"NearDuplicateItem"}
    for item in result.items:  # drop mode does not touch kept items
        assert set(item) == {"url", "html"}
    nshash = result.neardup.get("neardup/match/nshash", 0)
    simhash = result.neardup.get("neardup/match/simhash", 0)
    assert nshash + simhash >= len(REPRINT_OF)
    assert result.neardup == expected_drop_stats(
        7, 6, nshash, simhash, extracted=13
    )
    assert result.stats["item_dropped_reasons_count/NearDuplicateItem"] == 6
    assert result.stats["finish_reason"] == "finished"
