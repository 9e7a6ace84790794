"""Real crawls of the local news world through NearDupPipeline (real HTTP, real LevelDB)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from itemadapter import ItemAdapter
from scrapy.crawler import CrawlerRunner
from support import child_env, warm_python
from support.crawls import (
    COMPAT,
    LATER,
    LEAN,
    OTHERS,
    SITE_A,
    crawl,
    matches,
    run,
    run_failing_open,
    settings_for,
    url_path,
)
from support.local_site import ARTICLES, REPRINT_OF, ROUNDUP_OF, BadItemsSpider, MovedSpider, NewsSpider, UpdatedSpider

from scrapy_neardup.stores.memory import MemoryStore

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
    assert sorted(url_path(ItemAdapter(i)["url"]) for i, _ in result.dropped) == sorted(REPRINT_OF)
    assert {name for _, name in result.dropped} == {"NearDuplicateItem"}
    for item in result.items:  # drop mode does not touch kept items
        assert set(item) == {"url", "html"}
    assert result.neardup == {
        "neardup/items": 13,
        "neardup/unique": 7,
        "neardup/duplicate": 6,
        "neardup/dropped": 6,
        "neardup/extracted": 13,
        **matches(result.neardup, 6),
    }
    assert result.stats["item_dropped_reasons_count/NearDuplicateItem"] == 6
    assert result.stats["finish_reason"] == "finished"


STORY_OF = {path: REPRINT_OF.get(path, path) for path in ARTICLES}


@pytest.mark.parametrize("item", ["dict", "item", "dataclass", "attrs"])
@pytest_twisted.inlineCallbacks
def test_tag_mode_tags_every_copy(local_site, tmp_path, item):
    result = yield run(
        settings_for(tmp_path / "store", NEARDUP_ACTION="tag"),
        NewsSpider,
        root=local_site.root,
        paths=ARTICLES,
        item=item,
    )
    assert result.paths() == ARTICLES
    assert result.dropped == []
    similar: dict[str, int] = {}
    for scraped in result.items:
        adapter = ItemAdapter(scraped)
        path = url_path(adapter["url"])
        first = REPRINT_OF.get(path)
        assert adapter["duplicate_of"] == (local_site.url(first) if first else None), path
        assert isinstance(adapter["similar_id"], int)
        similar.setdefault(STORY_OF[path], adapter["similar_id"])
        assert adapter["similar_id"] == similar[STORY_OF[path]], path
    assert len(set(similar.values())) == 7  # one id per story
    neardup = result.neardup
    assert neardup == {
        "neardup/items": 13,
        "neardup/unique": 7,
        "neardup/duplicate": 6,
        "neardup/tagged": 13,
        "neardup/extracted": 13,
        **matches(neardup, 6),
    }


@pytest_twisted.inlineCallbacks
def test_item_class_without_tag_fields_passes_untagged(local_site, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="scrapy_neardup")
    paths = ["/a/metro.html", "/b/metro.html", "/a/canteen.html"]
    result = yield run(
        settings_for(tmp_path / "store", NEARDUP_ACTION="tag"),
        NewsSpider,
        root=local_site.root,
        paths=paths,
        item="plain",
    )
    assert result.paths() == paths  # never dropped by surprise
    for scraped in result.items:
        assert set(scraped.keys()) == {"url", "html"}
    assert result.neardup == {
        "neardup/items": 3,
        "neardup/unique": 2,
        "neardup/duplicate": 1,
        "neardup/tag_field_missing": 3,
        "neardup/extracted": 3,
        **matches(result.neardup, 1),
    }
    warnings = [r for r in caplog.records if "has no field" in r.getMessage()]
    assert len(warnings) == 1  # one warning per class, not per item
    assert "local_site.PlainItem" in warnings[0].getMessage()
    assert "'duplicate_of' and 'similar_id'" in warnings[0].getMessage()


# -- per-spider configuration ------------------------------------------------------------------


class TagSpider(NewsSpider):
    """Configured the Scrapy 2.14+ way: custom_settings."""

    name = "tagging"
    custom_settings = {"NEARDUP_ACTION": "tag", "NEARDUP_DUPLICATE_OF_FIELD": "copy_of"}


@pytest_twisted.inlineCallbacks
def test_custom_settings_configure_one_spider(local_site, tmp_path):
    paths = ["/a/metro.html", "/b/metro.html"]
    settings = settings_for(tmp_path / "store")  # project: drop
    tagged = yield run(settings, TagSpider, root=local_site.root, paths=paths)
    assert [item.get("copy_of") for item in tagged.items] == [None, local_site.url("/a/metro.html")]
    assert tagged.neardup["neardup/tagged"] == 2
    dropped = yield run(settings, NewsSpider, root=local_site.root, paths=["/c/metro.html"])
    assert dropped.items == [] and dropped.neardup["neardup/dropped"] == 1


@pytest_twisted.inlineCallbacks
def test_spider_arguments_are_run_time_switches(local_site, tmp_path):
    paths = ["/a/metro.html", "/b/metro.html"]
    settings = settings_for(tmp_path / "store")
    off = yield run(settings, NewsSpider, root=local_site.root, paths=paths, neardup_enabled="0")
    assert off.paths() == paths
    assert off.neardup == {}
    assert "duplicate_of" not in off.items[1]
    tag = yield run(settings, NewsSpider, root=local_site.root, paths=paths, neardup_action="tag")
    assert [item["duplicate_of"] for item in tag.items] == [None, local_site.url("/a/metro.html")]
    assert tag.neardup["neardup/tagged"] == 2 and "neardup/dropped" not in tag.neardup


@pytest.mark.parametrize(
    "settings, arguments, message",
    [
        ({"NEARDUP_SIMHASH_DISTANCE": 40}, {}, "NEARDUP_SIMHASH_DISTANCE: must be between 0 and 15, got 40"),
        ({}, {"neardup_action": "delete"}, "NEARDUP_ACTION (spider argument neardup_action): must be one of"),
        ({}, {"neardup_enabled": "maybe"}, "NEARDUP_ENABLED (spider argument neardup_enabled): must be a boolean"),
        ({"NEARDUP_STORE": "mysql://x"}, {}, "NEARDUP_STORE: unknown store"),
        ({"NEARDUP_REPORT": "/nonexistent-folder/review.html"}, {}, "NEARDUP_REPORT: the folder of"),
    ],
)
@pytest_twisted.inlineCallbacks
def test_invalid_value_fails_at_start_naming_the_setting(local_site, tmp_path, caplog, settings, arguments, message):
    yield run_failing_open(
        settings_for(tmp_path / "store", **settings), local_site.root, "neardup_bad_setting", **arguments
    )
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].startswith(f"scrapy-neardup: {message}"), errors
    assert not any(r.exc_info for r in caplog.records)
    assert not (tmp_path / "store").exists()  # nothing was opened


# -- stores shared across spiders and runs -----------------------------------------------------


@pytest_twisted.inlineCallbacks
def test_two_spiders_in_one_process_share_the_store(local_site, tmp_path):
    runner = CrawlerRunner(settings_for(tmp_path / "store", NEARDUP_ACTION="tag"))
    first, one = crawl(runner, NewsSpider, root=local_site.root, paths=SITE_A)
    second, two = crawl(runner, NewsSpider, root=local_site.root, paths=OTHERS)
    yield first
    yield second
    items = one.items + two.items
    assert sorted(url_path(i["url"]) for i in items) == sorted(ARTICLES)
    stories: dict[str, set[int]] = {}
    firsts = [i for i in items if i["duplicate_of"] is None]
    for item in items:
        stories.setdefault(STORY_OF[url_path(item["url"])], set()).add(item["similar_id"])
    assert all(len(ids) == 1 for ids in stories.values())  # one story, one id, across spiders
    assert len(firsts) == 7 and len({i["similar_id"] for i in firsts}) == 7
    total = {}
    for stats in (one.neardup, two.neardup):
        for name in ("items", "unique", "duplicate", "tagged"):
            total[name] = total.get(name, 0) + stats.get(f"neardup/{name}", 0)
        assert stats["neardup/items"] == stats.get("neardup/unique", 0) + stats.get("neardup/duplicate", 0)
    assert total == {"items": 13, "unique": 7, "duplicate": 6, "tagged": 13}


@pytest_twisted.inlineCallbacks
def test_second_run_catches_reprints_of_the_first(local_site, tmp_path):
    settings = settings_for(tmp_path / "store")
    first = yield run(settings, NewsSpider, root=local_site.root, paths=SITE_A)
    assert first.paths() == SITE_A
    # The second run re-crawls one page of the first: the same URL is a revisit, not its own reprint.
    second = yield run(settings, NewsSpider, root=local_site.root, paths=["/a/metro.html", *OTHERS])
    assert second.paths() == ["/a/metro.html", "/b/oldstreet.html", "/c/eldercare.html"]
    assert second.neardup["neardup/unique"] == 2 and second.neardup["neardup/revisit"] == 1
    assert second.neardup["neardup/dropped"] == 6
    reasons = sorted(str(item["url"]) for item, _ in second.dropped)
    assert reasons == sorted(local_site.url(p) for p in REPRINT_OF)


@pytest_twisted.inlineCallbacks
def test_store_of_another_recipe_stops_the_crawl_clearly(local_site, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    store = tmp_path / "store"
    yield run(settings_for(store), NewsSpider, root=local_site.root, paths=["/a/metro.html"])
    caplog.clear()
    yield run_failing_open(settings_for(store, NEARDUP_NSHASH_N=4), local_site.root, "neardup_store_format")
    errors = [
        r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("scrapy_neardup")
    ]
    assert len(errors) == 1
    assert str(store) in errors[0] and "nshash_n: stored 5, configured 4" in errors[0]
    assert not any(r.exc_info for r in caplog.records if r.name.startswith("scrapy_neardup"))


HOLDER = """
import sys, plyvel
db = plyvel.DB(sys.argv[1], create_if_missing=True)
print("holding", flush=True)
sys.stdin.read()
"""


@pytest_twisted.inlineCallbacks
def test_store_held_by_another_process_stops_the_crawl_clearly(local_site, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    store = tmp_path / "store"
    holder = warm_python.popen(
        [sys.executable, "-c", HOLDER, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        yield run_failing_open(settings_for(store), local_site.root, "neardup_store_unavailable")
    finally:
        holder.communicate("", timeout=10)
    errors = [
        r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("scrapy_neardup")
    ]
    assert len(errors) == 1
    assert str(store) in errors[0] and "held by another process" in errors[0] and "redis://" in errors[0]
    assert not any(r.exc_info for r in caplog.records)


@pytest_twisted.inlineCallbacks
def test_default_store_is_leveldb_under_dot_scrapy(local_site, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = settings_for(tmp_path)
    del settings["NEARDUP_STORE"]
    yield run(settings, NewsSpider, root=local_site.root, paths=["/a/metro.html"])
    second = yield run(settings, NewsSpider, root=local_site.root, paths=["/b/metro.html"])
    assert second.neardup["neardup/dropped"] == 1
    assert (tmp_path / ".scrapy" / "neardup" / "CURRENT").exists()


# -- live filtering: commit only what passed every pipeline -------------------------------------


@pytest_twisted.inlineCallbacks
def test_item_dropped_or_failed_later_leaves_nothing_behind(local_site, tmp_path):
    paths = ["/a/metro.html", "/a/canteen.html", "/b/metro.html", "/b/canteen.html", "/c/metro.html"]

    class Spider(NewsSpider):
        drop_later = {"/a/metro.html"}
        fail_later = {"/a/canteen.html"}

    result = yield run(settings_for(tmp_path / "store", **LATER), Spider, root=local_site.root, paths=paths)
    # The first copies went away after our pipeline; their reprints became the first copies.
    assert result.paths() == ["/b/metro.html", "/b/canteen.html"]
    assert [(url_path(i["url"]), name) for i, name in result.dropped] == [
        ("/a/metro.html", "DropItem"),
        ("/c/metro.html", "NearDuplicateItem"),
    ]
    assert result.neardup == {
        "neardup/items": 5,
        "neardup/unique": 4,
        "neardup/duplicate": 1,
        "neardup/dropped": 1,
        "neardup/released": 2,
        "neardup/extracted": 5,
        **matches(result.neardup, 1),
    }


@pytest.mark.parametrize("workers", [0, 1])
@pytest_twisted.inlineCallbacks
def test_copy_arriving_while_first_copy_is_pending_waits_for_it(local_site, tmp_path, workers):
    """/b/metro arrives while /a/metro sits 1 s in a later pipeline that then drops it.

    The spider chains the pages (each request follows the previous item), so /a is checked
    first; /b and /c are downloaded and checked while /a still waits.
    """

    class Spider(NewsSpider):
        delay_later = {"/a/metro.html": 1.0}

    result = yield run(
        settings_for(tmp_path / "store", NEARDUP_WORKERS=workers, **LATER),
        Spider,
        root=local_site.root,
        paths=["/a/metro.html", "/b/metro.html", "/c/metro.html"],
    )
    assert result.paths() == ["/b/metro.html"]
    assert sorted((url_path(i["url"]), name) for i, name in result.dropped) == [
        ("/a/metro.html", "DropItem"),
        ("/c/metro.html", "NearDuplicateItem"),
    ]
    assert result.neardup["neardup/released"] == 1
    assert result.neardup["neardup/unique"] == 2  # /a (released later) and /b


# -- bad items never crash the crawl ---------------------------------------------------------


@pytest.mark.parametrize("action", ["drop", "tag"])
@pytest_twisted.inlineCallbacks
def test_bad_items_are_counted_and_passed_untouched(local_site, tmp_path, caplog, action):
    caplog.set_level(logging.INFO, logger="scrapy_neardup")
    result = yield run(
        settings_for(
            tmp_path / "store", NEARDUP_ACTION=action, NEARDUP_EXTRACTOR="support.local_site.exploding_extractor"
        ),
        BadItemsSpider,
        root=local_site.root,
    )
    assert result.stats["finish_reason"] == "finished"
    assert "log_count/ERROR" not in result.stats
    robots = local_site.url("/a/robots.html")
    passed = [i for i in result.items if i.get("url") not in (robots, local_site.url("/bad/broken.html"))]
    assert len(passed) == 12
    for item in passed:
        assert "duplicate_of" not in item and "similar_id" not in item  # untouched
    assert result.items[0]["url"] == robots
    if action == "drop":
        assert [(i["url"], name) for i, name in result.dropped] == [
            (local_site.url("/bad/broken.html"), "NearDuplicateItem")
        ]
    else:
        assert result.items[-1]["duplicate_of"] == robots
    assert result.neardup == {
        "neardup/items": 14,
        "neardup/unique": 1,
        "neardup/duplicate": 1,
        **({"neardup/dropped": 1} if action == "drop" else {"neardup/tagged": 2}),
        "neardup/no_text": 6,  # no fields, None, blank, int, bytes in the text field, a list
        "neardup/error": 3,  # extractor raised, binary page as text, binary bytes
        "neardup/too_large": 1,  # 50 MB
        "neardup/short": 2,  # a three-character text, a page with no article
        "neardup/extracted": 3,  # robots, empty page, broken markup
        **matches(result.neardup, 1),
    }
    messages = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("Could not get text" in m for m in messages) == 1  # once, not per item
    assert any("RuntimeError: extractor failed on purpose" in m for m in messages)
    assert any("over NEARDUP_MAX_HTML_SIZE" in m for m in messages)
    assert any("holds int, not text" in m for m in messages)
    assert any("holds bytes, not text" in m for m in messages)
    assert any("holds list, not text" in m for m in messages)
    assert not any(r.exc_info for r in caplog.records)


@pytest_twisted.inlineCallbacks
def test_a_worker_killed_mid_crawl_costs_one_item(local_site, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="scrapy_neardup")
    from support.local_site import CrashSpider

    paths = ["/a/metro.html", "/b/canteen.html", "/a/canteen.html", "/b/metro.html", "/c/flood.html"]
    result = yield run(
        settings_for(tmp_path / "store", NEARDUP_WORKERS=1, NEARDUP_EXTRACTOR="support.local_site.crashing_extractor"),
        CrashSpider,
        root=local_site.root,
        paths=paths,
    )
    assert result.stats["finish_reason"] == "finished"
    # The pages queued behind it were retried on a new worker; only the page that killed its
    # worker (twice) passed unchecked.
    assert result.paths() == ["/a/metro.html", "/b/canteen.html", "/a/canteen.html", "/c/flood.html"]
    assert result.neardup["neardup/error"] == 1
    assert result.neardup["neardup/unique"] == 3 and result.neardup["neardup/dropped"] == 1
    messages = [r.getMessage() for r in caplog.records]
    assert sum("A worker process died" in m for m in messages) == 1
    assert any("WorkerDied" in m and "/b/canteen.html" in m for m in messages)


@pytest_twisted.inlineCallbacks
def test_a_page_over_the_extraction_time_bound_passes_and_the_pages_behind_it_go_on(local_site, tmp_path, caplog):
    """/bad/nested.html keeps extraction busy for about four seconds; with a 1.5 s bound its
    worker is killed, the page passes counted, and /a/metro, queued behind it on that worker, is
    prepared by the new one. (The bound leaves a loaded machine room for the other pages, which
    take milliseconds; the page is over the default size cap, lifted here.)"""
    caplog.set_level(logging.WARNING, logger="scrapy_neardup")
    paths = ["/bad/nested.html", "/a/metro.html", "/b/metro.html", "/a/canteen.html"]
    settings = settings_for(tmp_path / "store", NEARDUP_WORKERS=1, NEARDUP_EXTRACT_TIMEOUT=1.5, NEARDUP_MAX_HTML_SIZE=0)
    result = yield run(settings, NewsSpider, root=local_site.root, paths=paths)
    assert result.paths() == ["/bad/nested.html", "/a/metro.html", "/a/canteen.html"]
    assert [(url_path(i["url"]), name) for i, name in result.dropped] == [("/b/metro.html", "NearDuplicateItem")]
    assert result.neardup == {
        "neardup/items": 4,
        "neardup/extract_timeout": 1,
        "neardup/extracted": 3,  # the nested page's extraction never finished
        "neardup/unique": 2,
        "neardup/duplicate": 1,
        "neardup/dropped": 1,
        **matches(result.neardup, 1),
    }
    messages = [r.getMessage() for r in caplog.records]
    assert sum("NEARDUP_EXTRACT_TIMEOUT = 1.5 s" in m and "/bad/nested.html" in m for m in messages) == 1


@pytest.mark.parametrize("niceness", [0, 7])
@pytest_twisted.inlineCallbacks
def test_workers_run_at_the_configured_niceness(local_site, tmp_path, monkeypatch, niceness):
    log = tmp_path / "nice.log"
    monkeypatch.setenv("NEARDUP_TEST_NICE_LOG", str(log))  # the workers inherit the environment
    settings = settings_for(
        tmp_path / "store",
        NEARDUP_WORKERS=1,
        NEARDUP_WORKER_NICENESS=niceness,
        NEARDUP_EXTRACTOR="support.local_site.niceness_logging_extractor",
    )
    result = yield run(settings, NewsSpider, root=local_site.root, paths=ARTICLES[:3], mode="bytes")
    assert result.neardup["neardup/extracted"] == 3
    seen = {tuple(map(int, line.split())) for line in log.read_text().splitlines()}
    assert {pid for pid, _ in seen} != {os.getpid()}  # extracted in a worker, not here
    assert {nice for _, nice in seen} == {min(19, os.nice(0) + niceness)}


@pytest.mark.parametrize("mode", ["text", "bytes"])
@pytest_twisted.inlineCallbacks
def test_text_field_and_html_bytes_give_the_same_verdicts(local_site, tmp_path, mode):
    result = yield run(settings_for(tmp_path / "store"), NewsSpider, root=local_site.root, paths=ARTICLES, mode=mode)
    assert result.paths() == [p for p in ARTICLES if p not in REPRINT_OF]
    assert result.neardup["neardup/dropped"] == 6
    assert result.neardup.get("neardup/extracted", 0) == (13 if mode == "bytes" else 0)


# -- the way users run it: CrawlerProcess, scrapy runspider, ADDONS ----------------------------

SCRIPT = """
from scrapy.crawler import CrawlerProcess
from support.local_site import LocalSite, NewsSpider, ARTICLES

if __name__ == "__main__":
    with LocalSite() as site:
        process = CrawlerProcess({{
            "ADDONS": {{"scrapy_neardup.Addon": 0}},
            "NEARDUP_STORE": {store!r},
            "NEARDUP_WORKERS": 1,
            "LOG_LEVEL": "INFO",
            **{extra!r},
        }})
        half = len(ARTICLES) // 2
        process.crawl(NewsSpider, root=site.root, paths=ARTICLES[:half])
        process.crawl(NewsSpider, root=site.root, paths=ARTICLES[half:])
        process.start()
"""


def test_crawler_process_with_two_spiders_and_the_addon(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT.format(store=f"leveldb://{tmp_path / 'store'}", extra={**COMPAT, **LEAN}))
    done = warm_python.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=tmp_path, env=child_env()
    )
    assert done.returncode == 0, done.stderr[-3000:]
    log = done.stderr
    assert "scrapy_neardup.NearDupPipeline" in log  # enabled by the add-on
    summaries = [line for line in log.splitlines() if "scrapy-neardup: " in line and " items = " in line]
    assert len(summaries) == 2
    unique = sum(int(line.split(" items = ")[1].split(" new stories")[0]) for line in summaries)
    assert unique == 7
    assert "Traceback" not in log


def test_unguarded_script_with_workers_crawls_with_its_workers(tmp_path):
    """Workers are new processes that never import the crawl script: a script without a
    __main__ guard works with them (a forked or spawned pool would start the crawl again)."""
    lines = SCRIPT.format(store=f"leveldb://{tmp_path / 'store'}", extra={**COMPAT, **LEAN}).splitlines()
    guard = lines.index('if __name__ == "__main__":')
    unguarded = lines[:guard] + [line[4:] for line in lines[guard + 1 :]]
    script = tmp_path / "run.py"
    script.write_text("\n".join(unguarded) + "\n")
    done = warm_python.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=tmp_path, env=child_env()
    )
    assert done.returncode == 0, done.stderr[-3000:]
    log = done.stderr
    assert log.count("1 worker processes") == 2
    summaries = [line for line in log.splitlines() if "scrapy-neardup: " in line and " items = " in line]
    assert sum(int(line.split(" items = ")[1].split(" new stories")[0]) for line in summaries) == 7
    assert "workers_disabled" not in log
    assert "'neardup/extracted'" in log  # pages went through the workers' extraction


def test_scrapy_runspider_with_spider_arguments(local_site, tmp_path):
    spider = tmp_path / "spider.py"
    spider.write_text("from support.local_site import NewsSpider\nclass Spider(NewsSpider):\n    name = 'cli'\n")
    out = tmp_path / "out.jsonl"
    command = [
        sys.executable,
        "-m",
        "scrapy.cmdline",
        "runspider",
        str(spider),
        "-s",
        'ITEM_PIPELINES={"scrapy_neardup.NearDupPipeline": 200}',
        "-s",
        f"NEARDUP_STORE=leveldb://{tmp_path / 'store'}",
        "-s",
        "NEARDUP_WORKERS=0",
        *[
            f"-s{name}={value if isinstance(value, str) else json.dumps(value)}"
            for name, value in {**COMPAT, **LEAN}.items()
        ],
        "-a",
        f"root={local_site.root}",
        "-a",
        "paths=/a/metro.html,/b/metro.html,/c/metro.html",
        "-a",
        "neardup_action=tag",
        "-O",
        str(out),
    ]
    done = warm_python.run(command, capture_output=True, text=True, timeout=240, cwd=tmp_path, env=child_env())
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["duplicate_of"] for r in rows] == [None, local_site.url("/a/metro.html"), local_site.url("/a/metro.html")]
    assert len({r["similar_id"] for r in rows}) == 1


# -- the same rules on a Redis store -------------------------------------------------------------


@pytest_twisted.inlineCallbacks
def test_redis_store_commits_only_what_passed_every_pipeline(local_site, redis_url):
    class Spider(NewsSpider):
        drop_later = {"/a/metro.html"}

    paths = ["/a/metro.html", "/b/metro.html", "/c/metro.html", "/a/canteen.html", "/b/canteen.html"]
    settings = settings_for(redis_url, NEARDUP_REDIS_PARAMS={"socket_timeout": 5}, **LATER)
    result = yield run(settings, Spider, root=local_site.root, paths=paths)
    assert result.paths() == ["/b/metro.html", "/a/canteen.html"]
    assert [(url_path(i["url"]), name) for i, name in result.dropped] == [
        ("/a/metro.html", "DropItem"),
        ("/c/metro.html", "NearDuplicateItem"),
        ("/b/canteen.html", "NearDuplicateItem"),
    ]
    assert result.neardup["neardup/released"] == 1
    # A second process-like run (a new crawler) on the same Redis store sees what was kept.
    again = yield run(
        settings_for(redis_url), NewsSpider, root=local_site.root, paths=["/c/flood.html", "/c/metro.html"]
    )
    assert again.paths() == ["/c/flood.html"]
    assert [str(i["url"]) for i, _ in again.dropped] == [local_site.url("/c/metro.html")]


class CountingStore(MemoryStore):
    """A user's own store, registered through NEARDUP_STORES: counts the checks it served."""

    checks = 0

    def check_and_add(self, probe, record, confirm=None):
        CountingStore.checks += 1
        return super().check_and_add(probe, record, confirm)


@pytest_twisted.inlineCallbacks
def test_a_store_registered_in_neardup_stores_serves_a_crawl(local_site, tmp_path):
    CountingStore.checks = 0
    settings = settings_for("counting://crawl", NEARDUP_STORES={"counting": f"{__name__}.CountingStore"})
    result = yield run(settings, NewsSpider, root=local_site.root, paths=ARTICLES)
    assert result.paths() == [p for p in ARTICLES if p not in REPRINT_OF]
    assert CountingStore.checks == len(ARTICLES)
    assert result.neardup["neardup/duplicate"] == len(REPRINT_OF)


@pytest.mark.parametrize("workers", [0, 1])
@pytest_twisted.inlineCallbacks
def test_the_extracted_body_is_handed_on_in_the_text_out_field(local_site, tmp_path, workers):
    result = yield run(
        settings_for(tmp_path / "store", NEARDUP_WORKERS=workers, NEARDUP_TEXT_OUT_FIELD="body"),
        NewsSpider,
        root=local_site.root,
        paths=ARTICLES,
    )
    assert result.items and len(result.items) == len(ARTICLES) - len(REPRINT_OF)
    for item in result.items:
        body = ItemAdapter(item)["body"]
        assert isinstance(body, str) and len(body) > 100
        assert "<" not in body  # the article's text, not its markup
        assert body.split("\n")[0] in ItemAdapter(item)["html"]


# -- keeping the complete copy (NEARDUP_PREFER) ------------------------------------------------

PORTAL_FIRST = ["/p/oranges.html", "/p/robots.html", "/a/oranges.html", "/a/robots.html", "/bad/broken.html"]


def _store(request: Any, tmp_path: Path, kind: str) -> Path | str:
    """A LevelDB folder, or the Redis test server's URI (checks go out in batches there)."""
    return tmp_path / "store" if kind == "leveldb" else request.getfixturevalue("redis_url")


@pytest.mark.parametrize("action", ["drop", "tag"])
@pytest.mark.parametrize("kind", ["leveldb", "redis"])
@pytest_twisted.inlineCallbacks
def test_the_complete_article_replaces_the_portals_excerpt(request, local_site, tmp_path, action, kind):
    settings = settings_for(_store(request, tmp_path, kind), NEARDUP_PREFER="longest", NEARDUP_ACTION=action)
    result = yield run(settings, NewsSpider, root=local_site.root, paths=PORTAL_FIRST)
    items = {url_path(item["url"]): item for item in result.items}
    url = local_site.url
    assert items["/a/oranges.html"]["replaces"] == url("/p/oranges.html")
    assert items["/a/robots.html"]["replaces"] == url("/p/robots.html")
    assert not any("replaces" in items[path] for path in ("/p/oranges.html", "/p/robots.html"))
    assert result.neardup["neardup/replaced"] == 2 and result.neardup["neardup/unique"] == 4
    if action == "drop":  # the third copy names the complete article, and goes
        assert [(url_path(i["url"]), name) for i, name in result.dropped] == [("/bad/broken.html", "NearDuplicateItem")]
    else:  # similar_id stays the story's: the excerpt's
        broken, complete = items["/bad/broken.html"], items["/a/robots.html"]
        assert broken["duplicate_of"] == url("/a/robots.html")
        assert broken["similar_id"] == complete["similar_id"] == items["/p/robots.html"]["similar_id"]
        assert complete["duplicate_of"] is None


@pytest.mark.parametrize("kind", ["leveldb", "redis"])
@pytest_twisted.inlineCallbacks
def test_a_complete_article_dropped_later_leaves_the_excerpt_in_place(request, local_site, tmp_path, kind):
    """/a/robots waits 1 s in a later pipeline that then drops it; /bad/broken, a near-complete
    copy arriving meanwhile, waits for it, then replaces the excerpt itself."""

    class Spider(NewsSpider):
        delay_later = {"/a/robots.html": 1.0}
        drop_later = {"/a/oranges.html"}

    store = _store(request, tmp_path, kind)
    settings = settings_for(store, NEARDUP_PREFER="longest", **LATER)
    result = yield run(settings, Spider, root=local_site.root, paths=PORTAL_FIRST)
    assert result.paths() == ["/p/oranges.html", "/p/robots.html", "/bad/broken.html"]
    assert result.items[-1]["replaces"] == local_site.url("/p/robots.html")
    assert result.neardup["neardup/released"] == 2 and result.neardup["neardup/replaced"] == 3
    # The next run finds the excerpt of oranges still stored, and replaces it then; the
    # complete robots article holds no more than the broken page's copy, a duplicate of it.
    again = yield run(
        settings_for(store, NEARDUP_PREFER="longest"),
        NewsSpider,
        root=local_site.root,
        paths=["/a/oranges.html", "/a/robots.html"],
    )
    assert [item["replaces"] for item in again.items] == [local_site.url("/p/oranges.html")]
    assert [(url_path(i["url"]), name) for i, name in again.dropped] == [("/a/robots.html", "NearDuplicateItem")]


@pytest_twisted.inlineCallbacks
def test_an_item_class_without_the_replaces_field_passes_without_it(local_site, tmp_path, caplog):
    settings = settings_for(tmp_path / "store", NEARDUP_PREFER="longest")
    result = yield run(settings, NewsSpider, root=local_site.root, paths=PORTAL_FIRST[:3], item="item")
    assert result.paths() == PORTAL_FIRST[:3]
    assert result.neardup["neardup/replaces_field_missing"] == 1
    assert sum("has no field 'replaces' (NEARDUP_REPLACES_FIELD)" in r.getMessage() for r in caplog.records) == 1


@pytest_twisted.inlineCallbacks
def test_a_roundup_page_seen_first_drops_none_of_the_articles_it_carries(local_site, tmp_path):
    """A hostile page carrying three stories in full, crawled before them: every article
    passes, and a reprint of one of them is still dropped as a duplicate of the article."""
    paths = ["/hostile/roundup.html", *ROUNDUP_OF, "/b/metro.html"]
    result = yield run(settings_for(tmp_path / "store"), NewsSpider, root=local_site.root, paths=paths)
    assert result.paths() == paths[:-1]
    assert [(url_path(i["url"]), name) for i, name in result.dropped] == [("/b/metro.html", "NearDuplicateItem")]
    assert result.neardup["neardup/unique"] == 4 and result.neardup["neardup/duplicate"] == 1


@pytest_twisted.inlineCallbacks
def test_an_updated_page_is_never_dropped_as_a_revisit(local_site, tmp_path, caplog):
    """NEARDUP_REVISIT = "drop": a page re-crawled with two sentences added is the same story
    but not the same text: it passes and replaces the stored text, counted neardup/updated,
    and the log says what changed; the unchanged page is the only revisit dropped."""
    store = tmp_path / "store"
    paths = ["/a/metro.html", "/a/canteen.html"]
    first = yield run(settings_for(store), NewsSpider, root=local_site.root, paths=paths)
    assert first.paths() == paths
    caplog.set_level(logging.INFO)
    second = yield run(
        settings_for(store, NEARDUP_REVISIT="drop"),
        UpdatedSpider,
        root=local_site.root,
        paths=paths,
        updated="/a/metro.html",
    )
    assert second.paths() == ["/a/metro.html"]
    assert [(url_path(i["url"]), name) for i, name in second.dropped] == [("/a/canteen.html", "RevisitedItem")]
    assert {k: second.neardup.get(k, 0) for k in ("neardup/updated", "neardup/revisit", "neardup/dropped")} == {
        "neardup/updated": 1,
        "neardup/revisit": 1,
        "neardup/dropped": 1,
    }
    said = [r.getMessage() for r in caplog.records if "was updated since it was stored" in r.getMessage()]
    assert len(said) == 1 and local_site.url("/a/metro.html") in said[0]
    assert "content characters added" in said[0] and "the same story" in said[0]
    # The stored text is the updated one: the page as it was is now a change of it.
    third = yield run(settings_for(store, NEARDUP_REVISIT="drop"), NewsSpider, root=local_site.root, paths=paths[:1])
    assert third.paths() == ["/a/metro.html"] and third.neardup.get("neardup/updated") == 1


@pytest_twisted.inlineCallbacks
def test_a_second_crawl_passes_revisits_drops_them_when_asked_and_keeps_both_stories_of_a_key(
    local_site, tmp_path, caplog
):
    """Four crawls of one LevelDB store: the same pages again are revisits (passed, or dropped
    with NEARDUP_REVISIT = "drop"); a URL that now tells another story is a key collision:
    the new story is stored beside the old one, which is not forgotten."""
    store = tmp_path / "store"
    paths = ["/a/metro.html", "/b/metro.html", "/a/canteen.html"]
    first = yield run(settings_for(store), NewsSpider, root=local_site.root, paths=paths)
    assert first.paths() == ["/a/metro.html", "/a/canteen.html"]

    second = yield run(settings_for(store), NewsSpider, root=local_site.root, paths=paths)
    assert second.paths() == ["/a/metro.html", "/a/canteen.html"]  # passed, nothing stored
    assert [(url_path(i["url"]), name) for i, name in second.dropped] == [("/b/metro.html", "NearDuplicateItem")]
    assert {k: second.neardup.get(k, 0) for k in ("neardup/revisit", "neardup/unique", "neardup/duplicate")} == {
        "neardup/revisit": 2,
        "neardup/unique": 0,
        "neardup/duplicate": 1,
    }

    # The canteen URL now serves the flood story; the metro page is unchanged.
    caplog.set_level(logging.INFO)
    third = yield run(
        settings_for(store, NEARDUP_REVISIT="drop"),
        MovedSpider,
        root=local_site.root,
        paths=["/a/metro.html", "/a/flood.html"],
        moved="/a/flood.html=/a/canteen.html",
    )
    assert third.paths() == ["/a/canteen.html"]
    assert [(url_path(i["url"]), name) for i, name in third.dropped] == [("/a/metro.html", "RevisitedItem")]
    assert {
        k: third.neardup.get(k, 0)
        for k in ("neardup/revisit", "neardup/updated", "neardup/key_collision", "neardup/unique", "neardup/dropped")
    } == {
        "neardup/revisit": 1,
        "neardup/updated": 0,
        "neardup/key_collision": 1,
        "neardup/unique": 1,
        "neardup/dropped": 1,
    }
    canteen = local_site.url("/a/canteen.html")
    warned = [
        r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "key collision" in r.getMessage()
    ]
    assert len(warned) == 2, warned  # the item's, and the close summary's
    assert warned[0].startswith(f"scrapy-neardup: key collision: {canteen} already holds another story")
    assert "1 of the new stories stored beside another story under their key (key collisions)" in warned[1]

    # Under /a/canteen.html: the canteen story and the flood story, copies of both caught.
    fourth = yield run(
        settings_for(store, NEARDUP_ACTION="tag"),
        NewsSpider,
        root=local_site.root,
        paths=["/c/flood.html", "/b/canteen.html"],
    )
    tags = {url_path(i["url"]): i["duplicate_of"] for i in fourth.items}
    assert tags == {"/c/flood.html": canteen, "/b/canteen.html": canteen}
    assert fourth.neardup["neardup/duplicate"] == 2
