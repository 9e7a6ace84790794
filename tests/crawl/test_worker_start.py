"""Worker processes start as the crawl starts, and leave with it (real crawls, real workers)."""

from __future__ import annotations

import pytest
import pytest_twisted
from itemadapter import ItemAdapter
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler
from support.crawls import crawl, settings_for, url_path
from support.local_site import ARTICLES, REPRINT_OF, NewsSpider
from support.pipelines import ChildrenAtDownloader, UnitSpider, WatchedPipeline, child_processes
from twisted.internet import reactor
from twisted.internet.task import deferLater

from scrapy_neardup import NearDupPipeline
from scrapy_neardup.crawl.settings import NearDupConfig
from scrapy_neardup.crawl.workerstart import StartWorkers, start_pool

WATCHED = "support.pipelines.WatchedPipeline"


async def _ended(workers, seconds=30.0):
    """Whether every worker's process has exited (and been reaped) within ``seconds``."""
    for _ in range(int(seconds * 10)):
        if all(worker.transport.pid is None for worker in workers):
            return True
        await deferLater(reactor, 0.1)
    return False


def _watched(tmp_path, **extra):
    settings = settings_for(tmp_path / "store", NEARDUP_WORKERS=1, **extra)
    settings["ITEM_PIPELINES"] = {WATCHED: 200}
    return settings


def _with_addon(tmp_path, **extra):
    """The add-on enables the pipeline (it keeps WATCHED, a NearDupPipeline); a downloader
    middleware notes the processes running when Scrapy builds the downloader."""
    settings = _watched(tmp_path, **extra)
    settings["ADDONS"] = {"scrapy_neardup.Addon": 0}
    settings["DOWNLOADER_MIDDLEWARES"] = {"support.pipelines.ChildrenAtDownloader": 1}
    ChildrenAtDownloader.seen = set()
    return settings


async def _gone(pids, seconds=30.0):
    """Whether none of these child processes runs (or waits to be reaped) within ``seconds``."""
    for _ in range(int(seconds * 10)):
        if not pids & child_processes():
            return True
        await deferLater(reactor, 0.1)
    return False


@pytest_twisted.ensureDeferred
async def test_workers_are_started_before_the_spider_opens_and_leave_with_the_crawl(local_site, tmp_path):
    WatchedPipeline.last = None
    deferred, result = crawl(CrawlerRunner(_watched(tmp_path)), NewsSpider, root=local_site.root, paths=ARTICLES)
    await deferred
    pipeline = WatchedPipeline.last
    assert pipeline is not None and len(pipeline.workers_at_open) == 1
    assert pipeline.alive_at_open == [True]  # started by from_crawler, before the store opened
    kept = [p for p in ARTICLES if p not in REPRINT_OF]  # the verdicts of any crawl of this world
    assert result.paths() == kept
    assert sorted(url_path(ItemAdapter(i)["url"]) for i, _ in result.dropped) == sorted(REPRINT_OF)
    assert result.stats["neardup/extracted"] == len(ARTICLES)
    assert pipeline.pool is None
    assert await _ended(pipeline.workers_at_open)


@pytest_twisted.ensureDeferred
async def test_the_addon_starts_the_worker_before_scrapy_builds_its_downloader(local_site, tmp_path):
    """The first item waits for a ready worker: the add-on's extension starts it before Scrapy
    builds the rest of its start, and the pipeline takes that worker rather than a second."""
    WatchedPipeline.last = None
    deferred, result = crawl(CrawlerRunner(_with_addon(tmp_path)), NewsSpider, root=local_site.root, paths=ARTICLES)
    await deferred
    pipeline = WatchedPipeline.last
    assert pipeline is not None and len(pipeline.pids_at_open) == 1
    assert pipeline.pids_at_open[0] in ChildrenAtDownloader.seen
    assert pipeline.alive_at_open == [True]
    kept = [p for p in ARTICLES if p not in REPRINT_OF]
    assert result.paths() == kept
    assert sorted(url_path(ItemAdapter(i)["url"]) for i, _ in result.dropped) == sorted(REPRINT_OF)
    assert result.stats["neardup/extracted"] == len(ARTICLES)
    assert await _ended(pipeline.workers_at_open)


@pytest_twisted.ensureDeferred
async def test_workers_the_addon_started_for_a_pipeline_turned_off_leave_with_the_crawl(local_site, tmp_path):
    settings = _with_addon(tmp_path)
    settings["ITEM_PIPELINES"] = {"scrapy_neardup.NearDupPipeline": None}  # the add-on keeps it off
    before = child_processes()
    deferred, result = crawl(CrawlerRunner(settings), NewsSpider, root=local_site.root, paths=ARTICLES)
    await deferred
    started = ChildrenAtDownloader.seen - before
    assert len(started) == 1  # the worker, never taken
    assert not any(k.startswith("neardup/") for k in result.stats)
    assert len(result.items) == len(ARTICLES)
    assert await _gone(started)


@pytest_twisted.ensureDeferred
async def test_a_crawl_that_stops_at_open_stops_the_workers_it_started(local_site, tmp_path):
    WatchedPipeline.last = None
    settings = _watched(tmp_path, NEARDUP_REPORT="/nonexistent-folder/review.html")
    deferred, result = crawl(CrawlerRunner(settings), NewsSpider, root=local_site.root, paths=ARTICLES)
    await deferred
    assert result.stats["finish_reason"] == "neardup_bad_setting"
    pipeline = WatchedPipeline.last
    assert pipeline is not None and pipeline.alive_at_open == [True]
    assert await _ended(pipeline.workers_at_open)


def test_the_addon_starts_no_worker_outside_a_crawl():
    crawler = get_crawler(UnitSpider, {"NEARDUP_STORE": "memory://unit", "NEARDUP_WORKERS": 1})
    with pytest.raises(NotConfigured):
        StartWorkers.from_crawler(crawler)


def test_a_pipeline_built_outside_a_crawl_starts_no_worker():
    """``scrapy check``, a test or a look at the settings builds the pipeline without crawling."""
    crawler = get_crawler(UnitSpider, {"NEARDUP_STORE": "memory://unit", "NEARDUP_WORKERS": 1})
    pipeline = NearDupPipeline.from_crawler(crawler)
    assert pipeline.pool is None


def test_the_pipeline_takes_the_addons_workers_only_for_the_same_settings():
    """An extension built after the add-on's may change the settings: the pipeline then starts
    workers for its own, and the first ones leave."""
    settings = {"NEARDUP_STORE": "memory://unit", "NEARDUP_WORKERS": 1}
    for niceness, same in ((0, True), (5, False)):
        crawler = get_crawler(UnitSpider, settings)
        crawler.crawling = True  # as Scrapy sets it when the crawl starts
        early = StartWorkers.from_crawler(crawler).pool
        config = NearDupConfig.from_settings(
            get_crawler(UnitSpider, {**settings, "NEARDUP_WORKER_NICENESS": niceness}).settings
        )
        pool = start_pool(crawler, config)
        try:
            assert (pool is early) == same
            assert [worker.alive for worker in early._workers] == [same]
        finally:
            assert pool is not None
            pool.close()
            early.close()
