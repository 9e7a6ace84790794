"""NearDupPipeline built and opened as Scrapy does, outside a crawl, on a store of its own."""

from __future__ import annotations

import glob
import itertools
import os
from typing import Any

from scrapy import Spider
from scrapy.utils.test import get_crawler

from scrapy_neardup import NearDupPipeline

_namespaces = itertools.count()


class UnitSpider(Spider):
    name = "unit"


def make_pipeline(**settings: Any) -> NearDupPipeline:
    """A pipeline on a store of its own, opened like Scrapy opens it."""
    settings = {
        "NEARDUP_STORE": "memory://unit",
        "NEARDUP_NAMESPACE": f"ns{next(_namespaces)}",
        "NEARDUP_WORKERS": 0,
        "NEARDUP_FREEZE_GC": False,  # opened outside a crawl, it may never be closed to unfreeze
        **settings,
    }
    crawler = get_crawler(UnitSpider, settings)
    crawler.spider = crawler._create_spider()
    pipeline = NearDupPipeline.from_crawler(crawler)
    pipeline.open_spider()
    return pipeline


def neardup_stats(pipeline: NearDupPipeline) -> dict[str, Any]:
    return {
        k: v
        for k, v in pipeline.stats.get_stats().items()
        if k.startswith("neardup/") and k != "neardup/extract_seconds"
    }


class WatchedPipeline(NearDupPipeline):
    """NearDupPipeline that notes the worker processes it holds when the spider opens."""

    last: WatchedPipeline | None = None  # the last one opened

    def open_spider(self, spider: Spider | None = None) -> None:
        WatchedPipeline.last = self
        self.workers_at_open = list(self.pool._workers) if self.pool is not None else []
        self.alive_at_open = [worker.alive for worker in self.workers_at_open]
        self.pids_at_open = [worker.transport.pid for worker in self.workers_at_open]
        return super().open_spider(spider)


class FreezeWatch:
    """A pipeline after NearDupPipeline that notes, item by item, how many objects Python's
    garbage collector holds frozen (gc.get_freeze_count)."""

    seen: list[int] = []

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        import gc

        FreezeWatch.seen.append(gc.get_freeze_count())
        return item


def child_processes() -> set[int]:
    """Process ids of this process's children (Linux /proc), whatever they run: a worker just
    spawned may not have started Python yet."""
    found: set[int] = set()
    for children in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        with open(children, encoding="ascii") as handle:
            found.update(int(pid) for pid in handle.read().split())
    return found


class ChildrenAtDownloader:
    """A downloader middleware that notes this process's children when Scrapy builds it."""

    seen: set[int] = set()

    @classmethod
    def from_crawler(cls, crawler: Any) -> ChildrenAtDownloader:
        ChildrenAtDownloader.seen = child_processes()
        return cls()
