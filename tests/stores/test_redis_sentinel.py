"""The redis+sentinel:// store against real redis-server and redis-sentinel processes: it finds
the primary through Sentinel, and when the primary dies it goes on with the replica Sentinel
promotes, which holds every story stored before. Passwords stay hidden in this URI form too."""

from __future__ import annotations

import json
import logging
from urllib.parse import quote

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from support.news_corpus import ARTICLES
from support.passwords import SECRET, shows_no_password
from support.pipelines import make_pipeline, neardup_stats
from support.redis_server import free_port, start_sentinel_group

from scrapy_neardup.cli import main
from scrapy_neardup.crawl.pipeline import NearDuplicateItem
from scrapy_neardup.stores import StoreError, open_store


@pytest.fixture
def group():
    group = start_sentinel_group(password=SECRET)
    yield group
    group.stop()


@deferred_f_from_coro_f
async def test_a_failover_keeps_the_store_and_its_stories(group, caplog, capsys):
    uri = group.url(0)
    with caplog.at_level(logging.INFO, logger="scrapy_neardup"):
        pipeline = make_pipeline(NEARDUP_STORE=uri, NEARDUP_NAMESPACE="failover", NEARDUP_STORE_DOWN_TIMEOUT=30)
        for name in ("rail", "rice", "museum"):
            pipeline.item_scraped(
                await pipeline.process_item({"url": f"https://a.example/{name}", "text": ARTICLES[name]})
            )
        with group.primary.client() as primary:
            assert primary.wait(1, 5000) == 1  # the replica has every write
        assert group.primary_port() == group.primary.port
        group.primary.kill()
        # The reprint waits for Sentinel to promote the replica, then is found there.
        with pytest.raises(NearDuplicateItem, match=r"https://a\.example/rail"):
            await pipeline.process_item({"url": "https://b.example/rail", "text": "转载：" + ARTICLES["rail"]})
        assert group.primary_port() == group.replica.port
        pipeline.item_scraped(
            await pipeline.process_item({"url": "https://a.example/flood", "text": ARTICLES["flood"]})
        )
        pipeline.close_spider()
    stats = neardup_stats(pipeline)
    assert stats["neardup/unique"] == 4 and stats["neardup/dropped"] == 1
    assert "neardup/unchecked" not in stats and "neardup/commit_error" not in stats
    with open_store(uri, "failover") as store:
        assert store.count() == 4 and store.client.zcard(store.prefix + "p") == 0
    assert main(["info", "--store", uri, "--namespace", "failover"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["store"] == f"redis+sentinel://:***@127.0.0.1:{group.port}/neardup/0"
    assert shows_no_password(caplog.text + out + err)
    assert "redis+sentinel://:***@" in caplog.text


@pytest.mark.parametrize(
    "uri, said",
    [
        ("redis+sentinel://127.0.0.1:26379", "names no service"),
        ("redis+sentinel://127.0.0.1:26379/", "names no service"),
        ("redis+sentinel:///mymaster", "names no sentinel"),
        ("redis+sentinel://127.0.0.1:port/mymaster", "sentinel port 'port' is not a number"),
        ("redis+sentinel://127.0.0.1/mymaster/first", "db 'first' is not a number"),
        ("redis+sentinel://127.0.0.1/mymaster?password=x", "takes only sentinel_password in its query, not 'password'"),
    ],
)
def test_a_bad_sentinel_uri_says_what_is_wrong(uri, said):
    with pytest.raises(StoreError, match=said) as refused:
        open_store(uri)
    assert "bad Redis store URI" in str(refused.value)


def test_sentinels_that_do_not_answer_are_named_without_the_password(capsys):
    port = free_port()
    uri = f"redis+sentinel://:{quote(SECRET, safe='')}@127.0.0.1:{port}/neardup/0"
    with pytest.raises(StoreError) as refused:
        open_store(uri, retries=0)
    message = str(refused.value)
    assert f"sentinels 127.0.0.1:{port} (service 'neardup')" in message and shows_no_password(message), message
    assert main(["info", "--store", uri]) == 2
    assert shows_no_password(capsys.readouterr().err)


def test_sentinels_with_a_password_of_their_own_take_it_in_sentinel_kwargs_or_the_uri(capsys):
    group = start_sentinel_group(sentinel_password=SECRET)
    try:
        with pytest.raises(StoreError) as refused:
            open_store(group.url(0), retries=0)
        message = str(refused.value)
        assert f"sentinels 127.0.0.1:{group.port} (service 'neardup')" in message and "uthenticat" in message, message
        with open_store(group.url(0), redis_params={"sentinel_kwargs": {"password": SECRET}}) as store:
            assert store.count() == 0
        uri = f"{group.url(0)}?sentinel_password={quote(SECRET, safe='')}"  # for the command line
        assert main(["info", "--store", uri]) == 0
        out, err = capsys.readouterr()
        assert "sentinel_password=***" in out and shows_no_password(out + err)
    finally:
        group.stop()
