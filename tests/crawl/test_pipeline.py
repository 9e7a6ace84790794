"""NearDupPipeline as a component: building, reservations, signals, drop reasons, the add-on."""

from __future__ import annotations

import itertools
import logging
import time
import warnings

import pytest
import scrapy
from scrapy import signals
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.logformatter import LogFormatter
from scrapy.settings import Settings
from scrapy.utils.conf import build_component_list
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.test import get_crawler
from support.pipelines import UnitSpider, make_pipeline, neardup_stats

from scrapy_neardup import Addon, Detector, NearDuplicateItem, NearDupPipeline, open_store
from scrapy_neardup.crawl.addon import NearDupLogFormatter
from scrapy_neardup.crawl.failures import CrawlStopper
from scrapy_neardup.crawl.storeaccess import _SHARED
from scrapy_neardup.crawl.workerstart import EXTENSION_PATH
from scrapy_neardup.newsworld.small import STORIES
from scrapy_neardup.stores.record import COMMITTED, PENDING, content_key

_names = itertools.count()
TEXT = "\n".join(STORIES["metro"].paragraphs)
REPRINT = "本文转载自江城日报。\n" + "\n".join(STORIES["metro"].paragraphs[:5]) + "\n（责任编辑：李明）"
OTHER = "\n".join(STORIES["canteen"].paragraphs)


def store_of(pipeline):
    return pipeline.access.store


def test_disabled_pipeline_is_not_configured():
    crawler = get_crawler(UnitSpider, {"NEARDUP_ENABLED": False})
    with pytest.raises(NotConfigured, match="NEARDUP_ENABLED is False"):
        NearDupPipeline.from_crawler(crawler)


def test_invalid_setting_is_one_error_line_and_a_stand_in_that_stops_the_crawl(caplog):
    crawler = get_crawler(UnitSpider, {"NEARDUP_THRESHOLD": 2})
    with caplog.at_level(logging.ERROR, logger="scrapy_neardup"):
        stand_in = NearDupPipeline.from_crawler(crawler)
    assert caplog.messages == ["scrapy-neardup: NEARDUP_THRESHOLD: must be a number in (0, 1], got 2; the crawl stops"]
    assert isinstance(stand_in, CrawlStopper) and stand_in.reason == "neardup_bad_setting"


def test_misspelt_setting_is_warned_about(caplog):
    crawler = get_crawler(UnitSpider, {"NEARDUP_TRESHOLD": 0.9})
    with caplog.at_level(logging.WARNING, logger="scrapy_neardup"):
        NearDupPipeline.from_crawler(crawler)
    assert "Unknown setting NEARDUP_TRESHOLD" in caplog.text


def test_methods_take_no_required_spider_argument():
    # Scrapy >= 2.14 warns (an error in this suite) when a pipeline method requires it.
    from scrapy.pipelines import ItemPipelineManager

    crawler = get_crawler(UnitSpider, {"ITEM_PIPELINES": {"scrapy_neardup.NearDupPipeline": 200}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        manager = ItemPipelineManager.from_crawler(crawler)
    assert [type(m).__name__ for m in manager.middlewares] == ["NearDupPipeline"]


def test_open_logs_store_and_thresholds(caplog):
    with caplog.at_level(logging.INFO, logger="scrapy_neardup"):
        pipeline = make_pipeline(NEARDUP_THRESHOLD=0.85, NEARDUP_TTL=3600)
    line = next(r.getMessage() for r in caplog.records if "scrapy-neardup: store" in r.getMessage())
    assert "memory://unit" in line and "containment >= 0.85" in line and "time window 3600 s" in line
    assert "in the reactor thread" in line
    pipeline.close_spider()


def test_unreachable_store_fails_without_showing_the_password(caplog):
    from scrapy.exceptions import CloseSpider

    with caplog.at_level(logging.ERROR, logger="scrapy_neardup"), pytest.raises(CloseSpider):
        make_pipeline(
            NEARDUP_STORE="redis://:hunter2@127.0.0.1:1/0", NEARDUP_REDIS_PARAMS={"socket_connect_timeout": 1}
        )
    assert "127.0.0.1:1" in caplog.text
    assert "hunter2" not in caplog.text


@deferred_f_from_coro_f
async def test_unique_item_is_reserved_then_committed_on_item_scraped():
    pipeline = make_pipeline()
    item = {"url": "https://a/1", "text": TEXT}
    assert await pipeline.process_item(item) is item
    (entry,) = pipeline.reservations.entries()
    doc_id = entry[1].doc_id
    assert store_of(pipeline).get(doc_id).state == PENDING
    pipeline.crawler.signals.send_catch_log(
        signals.item_scraped, item=item, response=None, spider=pipeline.crawler.spider
    )
    assert store_of(pipeline).get(doc_id).state == COMMITTED
    assert pipeline.reservations.entries() == []
    pipeline.close_spider()


async def _until(condition, rounds=1000):
    import asyncio

    for _ in range(rounds):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never met")


@pytest.mark.parametrize("first_kept", [True, False])
@deferred_f_from_coro_f
async def test_copy_of_a_pending_item_waits_for_its_fate(first_kept):
    pipeline = make_pipeline()
    first = {"url": "https://a/1", "text": TEXT}
    await pipeline.process_item(first)  # reserved, still in the later pipelines
    (doc_id,) = [verdict.doc_id for _, verdict in pipeline.reservations.entries()]
    copy = {"url": "https://b/1", "text": REPRINT}
    outcome = deferred_from_coro(pipeline.process_item(copy))
    # It waits rather than being judged against a first copy that may still vanish.
    await _until(lambda: pipeline.reservations.waiters(doc_id) == 1)
    assert not outcome.called
    if first_kept:
        pipeline.item_scraped(first)
        with pytest.raises(NearDuplicateItem):
            await maybe_deferred_to_future(outcome)
        assert len(pipeline.reservations) == 0
    else:
        pipeline.item_dropped(first, exception=DropItem("later pipeline"))
        assert await maybe_deferred_to_future(outcome) is copy  # now the first of its story
        assert [item for item, _ in pipeline.reservations.entries()] == [copy]
    pipeline.close_spider()


@pytest.mark.parametrize(
    "signal, exception",
    [
        (signals.item_dropped, DropItem("storage said no")),
        (signals.item_error, None),
    ],
)
@deferred_f_from_coro_f
async def test_item_dropped_later_or_failing_is_released(signal, exception):
    pipeline = make_pipeline()
    item = {"url": "https://a/1", "text": TEXT}
    await pipeline.process_item(item)
    doc_id = pipeline.reservations.entries()[0][1].doc_id
    kwargs = {"exception": exception} if exception else {"failure": None}
    pipeline.crawler.signals.send_catch_log(signal, item=item, response=None, spider=pipeline.crawler.spider, **kwargs)
    assert store_of(pipeline).get(doc_id) is None
    assert neardup_stats(pipeline)["neardup/released"] == 1
    # Its reprint is now the first copy of the story.
    reprint = {"url": "https://b/1", "text": REPRINT}
    assert await pipeline.process_item(reprint) is reprint
    pipeline.close_spider()


@deferred_f_from_coro_f
async def test_our_own_drop_releases_nothing():
    pipeline = make_pipeline()
    first = {"url": "https://a/1", "text": TEXT}
    await pipeline.process_item(first)
    pipeline.item_scraped(first)
    copy = {"url": "https://b/1", "text": REPRINT}
    with pytest.raises(NearDuplicateItem) as dropped:
        await pipeline.process_item(copy)
    pipeline.item_dropped(copy, exception=dropped.value)
    assert store_of(pipeline).count() == 1
    assert "neardup/released" not in neardup_stats(pipeline)
    pipeline.close_spider()


@deferred_f_from_coro_f
async def test_item_replaced_by_a_later_pipeline_is_committed_by_its_key():
    pipeline = make_pipeline()
    item = {"url": "https://a/1", "text": TEXT}
    await pipeline.process_item(item)
    doc_id = pipeline.reservations.entries()[0][1].doc_id
    pipeline.item_scraped({"url": "https://a/1", "stored": True})  # a new object, same key
    assert store_of(pipeline).get(doc_id).state == COMMITTED
    pipeline.close_spider()
    assert "neardup/released" not in neardup_stats(pipeline)


@deferred_f_from_coro_f
async def test_close_releases_what_never_came_back(caplog):
    pipeline = make_pipeline()
    await pipeline.process_item({"url": "https://a/1", "text": TEXT})
    store = store_of(pipeline)
    with caplog.at_level(logging.WARNING, logger="scrapy_neardup"):
        pipeline.close_spider()
    assert store.count() == 0
    assert neardup_stats(pipeline)["neardup/released"] == 1
    assert "released 1 reservations" in caplog.text


@deferred_f_from_coro_f
async def test_drop_reason_names_the_first_copy_and_how_it_matched():
    pipeline = make_pipeline(NEARDUP_DROP_LOG_LEVEL="info")
    first = {"url": "https://a/1", "text": TEXT}
    await pipeline.process_item(first)
    pipeline.item_scraped(first)
    with pytest.raises(NearDuplicateItem) as dropped:
        await pipeline.process_item({"url": "https://b/1", "text": REPRINT})
    reason = str(dropped.value)
    assert "\n" not in reason
    assert reason.startswith("https://b/1 is a near-duplicate of https://a/1 (similar_id ")
    assert "containment" in reason and "jaccard" in reason and "SimHash distance" in reason
    assert dropped.value.log_level == "INFO"
    assert isinstance(dropped.value, DropItem)
    assert dropped.value.verdict.duplicate_of == "https://a/1"
    pipeline.close_spider()


@deferred_f_from_coro_f
async def test_tag_mode_writes_the_configured_fields():
    pipeline = make_pipeline(
        NEARDUP_ACTION="tag", NEARDUP_DUPLICATE_OF_FIELD="copy_of", NEARDUP_SIMILAR_ID_FIELD="story"
    )
    first = await pipeline.process_item({"url": "https://a/1", "text": TEXT})
    pipeline.item_scraped(first)
    copy = await pipeline.process_item({"url": "https://b/1", "text": REPRINT})
    other = await pipeline.process_item({"url": "https://c/1", "text": OTHER})
    assert first["copy_of"] is None and copy["copy_of"] == "https://a/1"
    assert first["story"] == copy["story"] != other["story"]
    assert neardup_stats(pipeline)["neardup/tagged"] == 3
    pipeline.close_spider()


@deferred_f_from_coro_f
async def test_item_without_key_gets_a_key_from_its_content():
    pipeline = make_pipeline(NEARDUP_ACTION="tag")
    first = await pipeline.process_item({"text": TEXT})
    pipeline.item_scraped(first)
    copy = await pipeline.process_item({"text": REPRINT})
    assert copy["duplicate_of"] == content_key({"text": TEXT}) and first["duplicate_of"] is None
    pipeline.close_spider()


@deferred_f_from_coro_f
async def test_keyless_reprint_in_a_later_run_is_not_taken_for_the_original(tmp_path):
    """Run 1 keeps a key-less story; run 2 meets its reprint first, at the same position."""
    store = f"leveldb://{tmp_path}"
    first_run = make_pipeline(NEARDUP_STORE=store, NEARDUP_NAMESPACE="runs")
    original = await first_run.process_item({"text": TEXT})
    first_run.item_scraped(original)
    first_run.close_spider()

    second_run = make_pipeline(NEARDUP_STORE=store, NEARDUP_NAMESPACE="runs")
    with pytest.raises(NearDuplicateItem, match=content_key({"text": TEXT})):
        await second_run.process_item({"text": REPRINT})
    again = await second_run.process_item({"text": TEXT})  # the same item: its content keys it alike
    second_run.item_scraped(again)
    assert neardup_stats(second_run) == {  # the original seen again under its key: a revisit
        "neardup/items": 2,
        "neardup/duplicate": 1,
        "neardup/dropped": 1,
        "neardup/revisit": 1,
        **{k: v for k, v in neardup_stats(second_run).items() if k.startswith("neardup/match/")},
    }
    second_run.close_spider()


@deferred_f_from_coro_f
async def test_store_failing_mid_crawl_passes_items_and_counts(tmp_path, caplog):
    pipeline = make_pipeline(NEARDUP_STORE=f"leveldb://{tmp_path}")
    pipeline.access.store._shared.db.close()  # the DB goes away under the crawl
    with caplog.at_level(logging.ERROR, logger="scrapy_neardup"):
        for n in range(3):
            item = {"url": f"https://a/{n}", "text": TEXT}
            assert await pipeline.process_item(item) is item
    assert neardup_stats(pipeline)["neardup/store_error"] == 3
    assert caplog.text.count("Store error") == 1
    pipeline.close_spider()


@deferred_f_from_coro_f
async def test_time_window_purges_old_documents_at_open():
    namespace = f"ttl{next(_names)}"
    store = open_store("memory://ttl", namespace=namespace)
    old = Detector(store, clock=lambda: time.time() - 7200)
    old.check("https://a/old", TEXT)
    store.close()
    pipeline = make_pipeline(NEARDUP_STORE="memory://ttl", NEARDUP_NAMESPACE=namespace, NEARDUP_TTL=3600)
    assert neardup_stats(pipeline)["neardup/purged"] == 1
    item = {"url": "https://b/1", "text": REPRINT}
    assert await pipeline.process_item(item) is item  # the old copy is outside the window
    pipeline.close_spider()


@deferred_f_from_coro_f
async def test_time_window_purges_a_leveldb_store_in_a_thread_while_the_crawl_goes_on(tmp_path):
    """A LevelDB store purges beside the crawl (a large store takes minutes), when the spider
    opens and then every NEARDUP_TTL / 4; the first check does not wait for it."""
    uri = f"leveldb://{tmp_path}/db"
    with open_store(uri, namespace="window") as store:
        Detector(store, clock=lambda: time.time() - 7200).check("https://a/old", TEXT)
    pipeline = make_pipeline(NEARDUP_STORE=uri, NEARDUP_NAMESPACE="window", NEARDUP_TTL=3600)
    purges = pipeline.purges
    assert purges.running is not None and purges._loop.running
    item = {"url": "https://b/1", "text": REPRINT}
    assert await pipeline.process_item(item) is item  # the old copy is outside the window
    await maybe_deferred_to_future(purges.running)
    assert neardup_stats(pipeline)["neardup/purged"] == 1
    assert store_of(pipeline).count() == 1  # the new item's reservation
    pipeline.close_spider()
    assert not purges._loop


@deferred_f_from_coro_f
async def test_time_window_purges_a_leveldb_store_again_while_the_spider_runs(tmp_path):
    """A long crawl keeps at most 1.25 windows of documents: every NEARDUP_TTL / 4 a purge."""
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    pipeline = make_pipeline(NEARDUP_STORE=f"leveldb://{tmp_path}/db", NEARDUP_TTL=1.0)
    item = {"url": "https://a/1", "text": TEXT}
    assert await pipeline.process_item(item) is item
    pipeline.item_scraped(item)
    assert store_of(pipeline).count() == 1
    for _ in range(150):  # the window passes; one of the purges after it takes the document
        await maybe_deferred_to_future(deferLater(reactor, 0.2, lambda: None))
        if neardup_stats(pipeline).get("neardup/purged"):
            break
    assert neardup_stats(pipeline)["neardup/purged"] == 1
    assert store_of(pipeline).count() == 0
    pipeline.close_spider()


def test_spiders_of_one_process_share_one_store_object():
    one = make_pipeline(NEARDUP_STORE="memory://shared", NEARDUP_NAMESPACE="together")
    two = make_pipeline(NEARDUP_STORE="memory://shared", NEARDUP_NAMESPACE="together")
    assert store_of(one) is store_of(two)
    one.close_spider()
    assert ("memory://shared", "together") in _SHARED
    two.close_spider()
    assert ("memory://shared", "together") not in _SHARED


def test_spiders_sharing_a_store_must_share_the_recipe():
    one = make_pipeline(NEARDUP_STORE="memory://recipe", NEARDUP_NAMESPACE="r")
    from scrapy.exceptions import CloseSpider

    with pytest.raises(CloseSpider):
        make_pipeline(NEARDUP_STORE="memory://recipe", NEARDUP_NAMESPACE="r", NEARDUP_NSHASH_N=3)
    one.close_spider()


# -- the add-on ---------------------------------------------------------------------------------


def test_addon_adds_the_pipeline_before_storage():
    crawler = get_crawler(UnitSpider, {"ADDONS": {Addon: 0}, "ITEM_PIPELINES": {"myproject.pipelines.Store": 300}})
    pipelines = crawler.settings.getdict("ITEM_PIPELINES")
    assert pipelines["scrapy_neardup.NearDupPipeline"] == 200
    assert pipelines["myproject.pipelines.Store"] == 300


def test_addon_keeps_a_priority_the_user_chose():
    crawler = get_crawler(
        UnitSpider, {"ADDONS": {"scrapy_neardup.Addon": 0}, "ITEM_PIPELINES": {"scrapy_neardup.NearDupPipeline": 50}}
    )
    assert crawler.settings.getdict("ITEM_PIPELINES") == {"scrapy_neardup.NearDupPipeline": 50}


def test_addon_puts_the_worker_start_first_among_extensions():
    """Scrapy builds extensions in their order, before its engine: first, the workers start
    before the others import and start what they need."""
    crawler = get_crawler(UnitSpider, {"ADDONS": {Addon: 0}})
    assert build_component_list(crawler.settings.getwithbase("EXTENSIONS"))[0] == EXTENSION_PATH


def test_addon_keeps_the_worker_start_off_when_the_user_turns_it_off():
    crawler = get_crawler(UnitSpider, {"ADDONS": {Addon: 0}, "EXTENSIONS": {EXTENSION_PATH: None}})
    assert EXTENSION_PATH not in build_component_list(crawler.settings.getwithbase("EXTENSIONS"))


def test_addon_on_plain_settings():
    settings = Settings({"ITEM_PIPELINES": {}})
    Addon().update_settings(settings)
    assert settings.getdict("ITEM_PIPELINES") == {"scrapy_neardup.NearDupPipeline": 200}


def test_log_formatter_honours_the_drop_level():
    class Dummy:
        crawler = get_crawler(UnitSpider)

    exception = NearDuplicateItem("x is a near-duplicate of y", "DEBUG")
    assert NearDupLogFormatter().dropped({"url": "x"}, exception, None, Dummy())["level"] == logging.DEBUG
    stock = LogFormatter().dropped({"url": "x"}, exception, None, Dummy())["level"]
    assert stock == (logging.DEBUG if scrapy.version_info >= (2, 13) else logging.WARNING)


def test_addon_sets_the_log_formatter_only_where_scrapy_ignores_the_drop_level():
    crawler = get_crawler(UnitSpider, {"ADDONS": {Addon: 0}})
    expected = (
        "scrapy.logformatter.LogFormatter"
        if scrapy.version_info >= (2, 13)
        else "scrapy_neardup.crawl.addon.NearDupLogFormatter"
    )
    assert crawler.settings.get("LOG_FORMATTER") == expected


def _defined_in_a_script(html):
    return html


def test_worker_processes_take_extractors_they_can_import():
    from scrapy_neardup.crawl.workers import can_pickle_extractor
    from scrapy_neardup.fingerprints.extract import html_to_text

    assert can_pickle_extractor("scrapy_neardup.fingerprints.extract.html_to_text")
    assert can_pickle_extractor(html_to_text)
    _defined_in_a_script.__module__ = "__main__"  # as if defined in the crawl script
    assert not can_pickle_extractor(_defined_in_a_script)
