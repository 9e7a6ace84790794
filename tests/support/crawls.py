"""In-process crawls through NearDupPipeline for the tests: settings, a run, what it kept and dropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scrapy
from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from scrapy.settings.default_settings import EXTENSIONS_BASE

from support.local_site import ARTICLES, NewsSpider

PIPELINE = "scrapy_neardup.NearDupPipeline"

# Timing stats vary from run to run; everything else is compared exactly.
TIMING = {"neardup/extract_seconds"}
# Scrapy < 2.12 warns without it (its project template sets it); 2.12+ deprecates it.
COMPAT = {"REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"} if scrapy.version_info < (2, 12) else {}
# Scrapy's remote-control extension (2.19+) imports aiohttp and starts an HTTP server in every
# crawl; no test uses it. The test crawls leave it out of EXTENSIONS_BASE: an EXTENSIONS entry of
# None would still import it (Scrapy loads every key of EXTENSIONS to compare them).
LEAN = {
    "EXTENSIONS_BASE": {path: order for path, order in EXTENSIONS_BASE.items() if not path.endswith(".RemoteControl")}
}

SITE_A = [p for p in ARTICLES if p.startswith("/a/")]
OTHERS = [p for p in ARTICLES if not p.startswith("/a/")]

# A pipeline after NearDupPipeline that drops, fails or delays the items a spider names.
LATER = {"ITEM_PIPELINES": {PIPELINE: 200, "support.local_site.DropLaterPipeline": 300}}


@dataclass
class Result:
    items: list[Any] = field(default_factory=list)  # in item_scraped order
    dropped: list[tuple[Any, str]] = field(default_factory=list)  # (item, exception class name)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def neardup(self) -> dict[str, Any]:
        return {k: v for k, v in self.stats.items() if k.startswith("neardup/") and k not in TIMING}

    def paths(self) -> list[str]:
        return [url_path(ItemAdapter(item).get("url")) for item in self.items]


def settings_lines(settings: dict[str, Any]) -> str:
    """``settings`` as the lines of a project's settings.py."""
    return "".join(f"{name} = {value!r}\n" for name, value in settings.items())


def without_unused_extensions(example_project: Path) -> None:
    """Adds LEAN to a copy of the example project's settings (its crawls in the tests)."""
    settings = example_project / "example" / "settings.py"
    settings.write_text(settings.read_text(encoding="utf-8") + "\n" + settings_lines(LEAN), encoding="utf-8")


def url_path(url: str | None) -> str:
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
        **COMPAT,
        **LEAN,
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


def matches(neardup: dict[str, Any], duplicates: int) -> dict[str, Any]:
    """The neardup/match/<method> counters: every duplicate matched by one method or more."""
    found = {k: v for k, v in neardup.items() if k.startswith("neardup/match/")}
    assert all(0 < v <= duplicates for v in found.values())
    assert duplicates == 0 or max(found.values()) >= 1
    return found


def run_failing_open(settings: dict[str, Any], root: str, reason: str, **arguments: Any):
    """A crawl the pipeline cannot serve: closed with ``reason`` before a page is fetched."""

    def check(result: Result) -> Result:
        assert result.items == []
        assert result.stats["finish_reason"] == reason
        assert "downloader/request_count" not in result.stats
        return result

    return run(settings, NewsSpider, root=root, paths=["/a/metro.html"], **arguments).addCallback(check)
