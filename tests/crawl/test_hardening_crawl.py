"""Hostile settings and stores in a crawl: each stops the crawl before a page is fetched, with
its finish reason and one ERROR line, never a traceback, and leaves nothing behind."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys

import pytest
import pytest_twisted
from scrapy.crawler import CrawlerRunner
from scrapy.settings import Settings
from support import warm_python
from support.crawls import COMPAT, LEAN, OTHERS, SITE_A, crawl, run, run_failing_open, settings_for
from support.local_site import ARTICLES, NewsSpider

from scrapy_neardup.crawl.settings import NearDupConfig
from scrapy_neardup.review.files import is_own_page
from scrapy_neardup.stores.memory import MemoryStore


def neardup_errors(caplog) -> list[str]:
    """The pipeline's ERROR lines; and no traceback was logged by anyone."""
    assert not any(r.exc_info for r in caplog.records), [r.getMessage() for r in caplog.records if r.exc_info]
    assert not any("Unhandled error" in r.getMessage() for r in caplog.records)
    return [
        r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("scrapy_neardup")
    ]


# -- seconds ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["NEARDUP_TTL", "NEARDUP_EXTRACT_TIMEOUT", "NEARDUP_STORE_DOWN_TIMEOUT"])
@pytest.mark.parametrize("value", ["nan", float("nan"), "inf", float("-inf"), -100, "-1e-9", True, "soon"])
def test_every_setting_in_seconds_refuses_what_is_not_finite_and_positive(name, value):
    with pytest.raises(ValueError, match=rf"^{name}: must be a number of seconds >= 0 and finite \(0: "):
        NearDupConfig.from_settings(Settings({name: value}))


@pytest_twisted.inlineCallbacks
def test_a_time_window_redis_cannot_hold_stops_the_crawl_before_anything_is_created(local_site, redis_server, caplog):
    """1e300 s passed every check once; Redis then refused each item's expiry and every item
    passed unchecked, counted as store errors, with the finish reason "finished"."""
    namespace = "huge-ttl"
    settings = settings_for(redis_server.url(), NEARDUP_TTL=1e300, NEARDUP_NAMESPACE=namespace)
    yield run_failing_open(settings, local_site.root, "neardup_bad_setting")
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and "cannot keep ttl 1e+300 s" in errors[0] and "NEARDUP_TTL" in errors[0], errors
    assert list(redis_server.client().scan_iter(f"neardup:{{{namespace}}}:*")) == []


@pytest_twisted.inlineCallbacks
def test_a_namespace_holding_another_programs_metadata_stops_the_crawl_in_one_line(local_site, redis_server, caplog):
    redis_server.client().set("neardup:{theirs}:meta", b"<not json>")
    settings = settings_for(redis_server.url(), NEARDUP_NAMESPACE="theirs")
    yield run_failing_open(settings, local_site.root, "neardup_store_format")
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and "holds metadata that scrapy-neardup did not write ('<not json>')" in errors[0], errors
    assert redis_server.client().get("neardup:{theirs}:meta") == b"<not json>"


# -- store classes registered in NEARDUP_STORES -----------------------------------------------


class FailingStore(MemoryStore):
    @classmethod
    def from_uri(cls, uri, namespace="default", **options):
        raise RuntimeError("the backend's server is on fire")


class NotAStore:
    @classmethod
    def from_uri(cls, uri, namespace="default", **options):
        return cls()


def a_function(uri, namespace="default", **options):
    return MemoryStore()


class GivesNoStore(MemoryStore):
    @classmethod
    def from_uri(cls, uri, namespace="default", **options):
        return "memory://"


@pytest.mark.parametrize(
    "registered, says",
    [
        (f"{__name__}.FailingStore", "RuntimeError: the backend's server is on fire"),
        (f"{__name__}.NotAStore", "not a store class"),
        (f"{__name__}.a_function", "not a store class"),
        ("logging.DEBUG", "is 10, not a store class"),  # an int reached through a dotted path
        (FailingStore, "RuntimeError"),  # the class itself, not its path
        (int, "not a store class"),
        (f"{__name__}.GivesNoStore", "GivesNoStore.from_uri gave str, not a store"),
    ],
)
@pytest_twisted.inlineCallbacks
def test_a_registered_store_that_is_no_store_or_fails_stops_with_one_line(
    local_site, tmp_path, caplog, registered, says
):
    settings = settings_for("custom://x", NEARDUP_STORES={"custom": registered})
    yield run_failing_open(settings, local_site.root, "neardup_store_unavailable")
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and errors[0].startswith("scrapy-neardup: cannot open its store: "), errors
    assert says in errors[0] and errors[0].endswith("; the crawl stops")


# -- the crawl's files: the review page, the feeds, the store ----------------------------------


class OtherNewsSpider(NewsSpider):
    name = "other"


def feed(path, **options) -> dict:
    return {"FEEDS": {str(path): {"format": "jsonlines", **options}}}


@pytest.mark.parametrize(
    "feed_path, says",
    [
        ("{dir}/items.jsonl", "is a file the feed"),
        ("file://{dir}/items.jsonl", "is a file the feed"),
        ("{dir}/%(name)s.jsonl", "is a file the feed"),  # filled with the spider's name: news.jsonl
        ("{dir}/items-%(time)s.jsonl", "is a file the feed"),  # any time: the page matches
    ],
)
@pytest_twisted.inlineCallbacks
def test_a_review_page_a_feed_writes_stops_the_crawl_before_anything_is_opened(
    local_site, tmp_path, caplog, feed_path, says
):
    """NEARDUP_REPORT equal to a feed once left the feed holding the page and no item, while
    Scrapy logged "Stored jsonlines feed (40 items)"."""
    page = {
        "{dir}/items.jsonl": "items.jsonl",
        "file://{dir}/items.jsonl": "items.jsonl",
        "{dir}/%(name)s.jsonl": "news.jsonl",
        "{dir}/items-%(time)s.jsonl": "items-2026-01-01T00-00-00+00-00.jsonl",
    }[feed_path]
    settings = settings_for(
        tmp_path / "store", NEARDUP_REPORT=str(tmp_path / page), **feed(feed_path.format(dir=tmp_path))
    )
    yield run_failing_open(settings, local_site.root, "neardup_bad_setting")
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and errors[0].startswith("scrapy-neardup: NEARDUP_REPORT: the review page"), errors
    assert says in errors[0] and errors[0].endswith("; the crawl stops")
    assert not (tmp_path / "store").exists()


@pytest_twisted.inlineCallbacks
def test_a_feed_pattern_that_cannot_name_the_page_lets_both_be_written(local_site, tmp_path):
    page = tmp_path / "review.html"
    settings = settings_for(tmp_path / "store", NEARDUP_REPORT=str(page), **feed(tmp_path / "%(name)s-%(time)s.jsonl"))
    result = yield run(settings, NewsSpider, root=local_site.root, paths=ARTICLES)
    assert result.stats["finish_reason"] == "finished"
    assert is_own_page(str(page))
    (written,) = tmp_path.glob("news-*.jsonl")
    assert len(written.read_text(encoding="utf-8").splitlines()) == len(result.items) > 0


@pytest.mark.parametrize("inside", ["page", "feed"])
@pytest_twisted.inlineCallbacks
def test_a_page_or_feed_inside_the_leveldb_folder_is_refused(local_site, tmp_path, caplog, inside):
    store = tmp_path / "store"
    store.mkdir()
    extra = {"NEARDUP_REPORT": str(store / "review.html")} if inside == "page" else feed(store / "items.jsonl")
    yield run_failing_open(settings_for(store, **extra), local_site.root, "neardup_bad_setting")
    errors = neardup_errors(caplog)
    setting = "NEARDUP_REPORT" if inside == "page" else "NEARDUP_STORE"
    assert len(errors) == 1 and errors[0].startswith(f"scrapy-neardup: {setting}: "), errors
    assert f"is inside the store's folder ({store})" in errors[0]
    assert not (store / "CURRENT").exists()  # the store was not opened (Scrapy made the feed's file)
    assert os.listdir(store) == ([] if inside == "page" else ["items.jsonl"])


@pytest.mark.parametrize("jobdir", ["store", "store/job", "job/requests.queue/store"])
@pytest_twisted.inlineCallbacks
def test_a_job_folder_sharing_the_leveldb_folder_is_refused(local_site, tmp_path, caplog, jobdir):
    """JOBDIR equal to the store's folder had a second crawl run with Scrapy's queue among LevelDB's
    files. Scrapy makes its job folder before a pipeline opens; the store is then not opened."""
    store = tmp_path / "store"
    yield run(settings_for(store), NewsSpider, root=local_site.root, paths=ARTICLES)  # the store exists
    kept = sorted(os.listdir(store))
    job = tmp_path / ("job" if jobdir.startswith("job/") else jobdir)
    store_uri = tmp_path / "job/requests.queue/store" if jobdir.startswith("job/") else store
    yield run_failing_open(settings_for(store_uri, JOBDIR=str(job)), local_site.root, "neardup_bad_setting")
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and errors[0].startswith("scrapy-neardup: NEARDUP_STORE: "), errors
    said = {
        "store": "(JOBDIR) is the store's folder",
        "store/job": "(JOBDIR) is inside the store's folder",
        "job/requests.queue/store": "is inside the job's requests.queue (JOBDIR)",
    }[jobdir]
    assert said in errors[0], errors
    scrapys = {"requests.seen", "requests.queue", "spider.state", "job"}  # Scrapy's, made before the pipeline opens
    assert sorted(set(os.listdir(store)) - scrapys) == kept  # the store's files untouched
    assert not (tmp_path / "job/requests.queue/store/CURRENT").exists()


@pytest_twisted.inlineCallbacks
def test_a_store_and_a_page_inside_the_job_folder_are_taken(local_site, tmp_path):
    job = tmp_path / "job"
    settings = settings_for(job / "store", JOBDIR=str(job), NEARDUP_REPORT=str(job / "review.html"))
    result = yield run(settings, NewsSpider, root=local_site.root, paths=ARTICLES)
    assert result.stats["finish_reason"] == "finished" and result.items
    assert (job / "store" / "CURRENT").exists() and (job / "requests.seen").exists()
    assert is_own_page(str(job / "review.html"))


@pytest_twisted.inlineCallbacks
def test_a_file_at_the_page_path_that_neardup_did_not_write_is_left_alone(local_site, tmp_path, caplog):
    page = tmp_path / "notes.html"
    page.write_text("<p>my notes</p>", encoding="utf-8")
    yield run_failing_open(
        settings_for(tmp_path / "store", NEARDUP_REPORT=str(page)), local_site.root, "neardup_bad_setting"
    )
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and "exists and is not a page neardup wrote" in errors[0], errors
    assert page.read_text(encoding="utf-8") == "<p>my notes</p>"


@pytest_twisted.inlineCallbacks
def test_two_spiders_of_one_process_never_write_one_page(local_site, tmp_path, caplog):
    page = tmp_path / "review.html"
    runner = CrawlerRunner(settings_for(tmp_path / "store", NEARDUP_REPORT=str(page)))
    first, one = crawl(runner, NewsSpider, root=local_site.root, paths=SITE_A)
    second, two = crawl(runner, OtherNewsSpider, root=local_site.root, paths=OTHERS)
    yield first
    yield second
    reasons = sorted(result.stats["finish_reason"] for result in (one, two))
    assert reasons == ["finished", "neardup_bad_setting"]
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and "is written by spider" in errors[0] and "%(name)s" in errors[0], errors
    finished = one if one.stats["finish_reason"] == "finished" else two
    assert len(re.findall(r"<tr><th>[a-z ]+</th><td>(\d+)</td>", page.read_text(encoding="utf-8"))) > 0
    assert f"neardup review: {'news' if finished is one else 'other'}" in page.read_text(encoding="utf-8")


@pytest_twisted.inlineCallbacks
def test_the_spiders_name_in_the_page_path_gives_each_spider_its_page(local_site, tmp_path):
    runner = CrawlerRunner(settings_for(tmp_path / "store", NEARDUP_REPORT=str(tmp_path / "review-%(name)s.html")))
    first, one = crawl(runner, NewsSpider, root=local_site.root, paths=SITE_A)
    second, two = crawl(runner, OtherNewsSpider, root=local_site.root, paths=OTHERS)
    yield first
    yield second
    assert one.stats["finish_reason"] == two.stats["finish_reason"] == "finished"
    assert "neardup review: news" in (tmp_path / "review-news.html").read_text(encoding="utf-8")
    assert "neardup review: other" in (tmp_path / "review-other.html").read_text(encoding="utf-8")


@pytest_twisted.inlineCallbacks
def test_a_page_in_a_read_only_folder_stops_the_crawl_before_the_store_opens(local_site, tmp_path, caplog, request):
    page = request.getfixturevalue("read_only_folder") / "review.html"
    yield run_failing_open(
        settings_for(tmp_path / "store", NEARDUP_REPORT=str(page)), local_site.root, "neardup_bad_setting"
    )
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and f"NEARDUP_REPORT: cannot write the review page {page}" in errors[0], errors
    assert not (tmp_path / "store").exists()


# -- worker processes ----------------------------------------------------------------------------

EMPTY_CRAWL = """
import scrapy
from scrapy.crawler import CrawlerProcess


class Nothing(scrapy.Spider):
    name = "nothing"
    start_urls = []


process = CrawlerProcess({{
    "ITEM_PIPELINES": {{"scrapy_neardup.NearDupPipeline": 200}},
    "NEARDUP_STORE": "memory://",
    "NEARDUP_WORKERS": 2,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    **{extra!r},
}})
process.crawl(Nothing)
process.start()
"""


ONE_ITEM_CRAWL = """
import json

import scrapy
from scrapy.crawler import CrawlerProcess

TEXT = "河边的步道今年春天修好了，新添了路灯和长椅。晚上来散步的居民比往年多了不少。" * 4


class OneItem(scrapy.Spider):
    name = "one"
    start_urls = ["data:text/plain,page"]

    def parse(self, response):
        yield {{"url": "https://a.example/river", "text": TEXT}}


process = CrawlerProcess({{
    "ITEM_PIPELINES": {{"scrapy_neardup.NearDupPipeline": 200}},
    "NEARDUP_STORE": "memory://",
    "NEARDUP_WORKERS": 1,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    **{extra!r},
}})
crawler = process.create_crawler(OneItem)
process.crawl(crawler)
process.start()
print(json.dumps({{k: v for k, v in crawler.stats.get_stats().items() if k.startswith("neardup/")}}))
"""


def test_workers_import_the_package_the_crawler_imported_not_one_in_its_folder(tmp_path):
    """A worker started with ``python -c`` looked in the crawl's current folder first: a source
    checkout there replaced the installed package in the workers, not in the crawler, and no
    page could be read. The crawler itself is a real process here, started from another folder."""
    checkout = tmp_path / "checkout"
    (checkout / "scrapy_neardup").mkdir(parents=True)
    (checkout / "scrapy_neardup" / "__init__.py").write_text('raise ImportError("the checkout")\n', encoding="utf-8")
    script = tmp_path / "scripts" / "one.py"
    script.parent.mkdir()
    script.write_text(ONE_ITEM_CRAWL.format(extra={**COMPAT, **LEAN}), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=checkout)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the checkout" not in done.stderr, done.stderr[-3000:]
    stats = json.loads(done.stdout.strip().splitlines()[-1])
    assert stats.get("neardup/unique") == 1 and "neardup/workers_died" not in stats, stats


def test_an_empty_crawl_with_workers_ends_without_a_traceback(tmp_path):
    """The crawl ended before its workers had loaded their tables: each printed a
    BrokenPipeError traceback as it said it was ready to a crawler that had gone."""
    script = tmp_path / "empty.py"
    script.write_text(EMPTY_CRAWL.format(extra={**COMPAT, **LEAN}), encoding="utf-8")
    done = warm_python.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 worker processes" in done.stderr and "Spider closed (finished)" in done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr[-3000:]
