"""The redis:// store when things are wrong, against real redis-server processes: passwords
never shown, whatever form the URI gives them in; a store that cannot be opened says why; a
server that may evict keys is refused, and one that comes back empty stops its users."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from urllib.parse import quote

import pytest
from scrapy.exceptions import CloseSpider
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f
from support.news_corpus import ARTICLES
from support.passwords import SECRET, WRONG, shows_no_password
from support.pipelines import make_pipeline, neardup_stats
from support.redis_server import free_port, start_redis
from support.twin_sites import Site, crawl, numbered_pages, site_pages

from scrapy_neardup import DUPLICATE, UNIQUE, Detector
from scrapy_neardup.cli import main
from scrapy_neardup.crawl.pipeline import NearDuplicateItem
from scrapy_neardup.crawl.settings import NearDupConfig
from scrapy_neardup.stores import StoreError, StoreUnavailable, open_store, receipts, redact
from scrapy_neardup.stores.base import StoreLost


def credential_forms(host: str, socket: str, password: str) -> dict[str, str]:
    """Every way redis-py takes a password from a URI, with the password percent-encoded."""
    encoded = quote(password, safe="")
    return {
        "userinfo": f"redis://:{encoded}@{host}/0",
        "user and password": f"redis://default:{encoded}@{host}/0",
        "query": f"redis://{host}/0?password={encoded}",
        "query with username": f"redis://{host}/0?username=default&password={encoded}",
        "unix socket, userinfo": f"unix://:{encoded}@{socket}?db=0",
        "unix socket, query": f"unix://{socket}?db=0&password={encoded}",
    }


@pytest.fixture(scope="module")
def secured():
    server = start_redis(password=SECRET, unix_socket=True)
    yield server
    server.stop()


@pytest.mark.parametrize(
    "uri, shown",
    [
        ("redis://:s3cr%23t@h:6379/0", "redis://:***@h:6379/0"),
        ("redis://default:s3cr%23t@h/0", "redis://default:***@h/0"),
        ("rediss://:s3cr%23t@h:6380/0?ssl_cert_reqs=none", "rediss://:***@h:6380/0?ssl_cert_reqs=none"),
        ("redis://h/0?db=1&password=s3cr%23t&username=u", "redis://h/0?db=1&password=***&username=u"),
        ("redis://h/0?ssl_password=s3cr", "redis://h/0?ssl_password=***"),
        ("unix://:s3cr%23t@/run/redis.sock?db=0", "unix://:***@/run/redis.sock?db=0"),
        ("unix:///run/a@b.sock?password=s3cr", "unix:///run/a@b.sock?password=***"),
        ("redis://s3cr@h/0", "redis://***@h/0"),  # a password given without its colon
        # raw '#', '/', '?' or '@' in a password: up to the last '@' is hidden
        ("redis://:s3cr#t/x?y@z%@h:6379/0", "redis://:***@h:6379/0"),
        ("redis://u:s3cr/t@h/0", "redis://u:***@h/0"),
        ("redis://:s3cr@t@h/0", "redis://:***@h/0"),
        # an '@' that may be in the query: nothing can be shown
        ("redis://:s3cr?t@h/0", "redis://***"),
        ("redis://h/0?password=s3cr@t", "redis://***"),
        ("redis://h/0?password=s3cr#t", "redis://h/0?password=***#***"),
        ("redis://h:6379/0", "redis://h:6379/0"),
        (
            "redis+sentinel://:s3cr%23t@h1:26379,h2:26380/mymaster/0",
            "redis+sentinel://:***@h1:26379,h2:26380/mymaster/0",
        ),
        ("redis+sentinel://default:s3cr@h1,h2/mymaster", "redis+sentinel://default:***@h1,h2/mymaster"),
        ("redis+sentinel://:s3cr#t/x?y@z%@h1:26379,h2:26380/m", "redis+sentinel://:***@h1:26379,h2:26380/m"),
        ("redis+sentinel://h1,h2/m/0?sentinel_password=s3cr", "redis+sentinel://h1,h2/m/0?sentinel_password=***"),
        ("leveldb:///data/a@b", "leveldb:///data/a@b"),
        ("/data/neardup", "/data/neardup"),
    ],
)
def test_redact_hides_every_credential_form(uri, shown):
    assert redact(uri) == shown


def test_every_credential_form_opens_and_shows_no_password(secured, capsys, caplog):
    host = f"127.0.0.1:{secured.port}"
    forms = credential_forms(host, secured.socket, SECRET)
    open_store(next(iter(forms.values())), "forms").close()  # info shows a store, never makes one
    for form, uri in forms.items():
        assert main(["info", "--store", uri, "--namespace", "forms"]) == 0, form
        out, err = capsys.readouterr()
        shown = json.loads(out)["store"]
        assert "***" in shown and shows_no_password(out + err), (form, shown)
        assert (secured.socket if "unix" in form else host) in shown, form

        with caplog.at_level(logging.INFO, logger="scrapy_neardup"):
            pipeline = make_pipeline(NEARDUP_STORE=uri, NEARDUP_NAMESPACE="forms")
            pipeline.close_spider()
        opened = [r.getMessage() for r in caplog.records if "scrapy-neardup: store" in r.getMessage()]
        assert len(opened) == 1 and "***" in opened[0] and shows_no_password(caplog.text), form
        caplog.clear()


def test_a_wrong_password_in_any_form_is_not_shown(secured, capsys):
    host = f"127.0.0.1:{secured.port}"
    for form, uri in credential_forms(host, secured.socket, WRONG).items():
        assert main(["info", "--store", uri]) == 2, form
        _, err = capsys.readouterr()
        assert "***" in err and shows_no_password(err), (form, err)


@pytest.mark.parametrize(
    "uri",
    [
        f"redis://:{SECRET}@127.0.0.1:{{port}}/0",
        f"redis://default:{SECRET}@127.0.0.1:{{port}}/0",
        f"redis://127.0.0.1:{{port}}/0?password={SECRET}",
        f"redis+sentinel://:{SECRET}@127.0.0.1:{{port}}/neardup/0",
    ],
)
def test_a_password_not_percent_encoded_is_refused_and_not_shown(secured, capsys, uri):
    uri = uri.format(port=secured.port)
    with pytest.raises(StoreError) as refused:
        open_store(uri, retries=0)
    message = str(refused.value)
    assert "percent-encoded" in message and shows_no_password(message), message
    assert main(["info", "--store", uri]) == 2
    assert shows_no_password(capsys.readouterr().err)


def test_redis_params_that_are_not_a_dict_are_not_echoed():
    with pytest.raises(ValueError) as error:
        NearDupConfig.from_settings(Settings({"NEARDUP_REDIS_PARAMS": '{"password": "s3cr#t/x?y@z%"'}))
    assert "NEARDUP_REDIS_PARAMS" in str(error.value) and shows_no_password(str(error.value))


def _refusal(uri: str, capsys, **options) -> str:
    """The message of a store that cannot be opened, checked to be the CLI's too."""
    with pytest.raises(StoreError) as refused:
        open_store(uri, retries=0, **options)
    message = str(refused.value)
    if not options:
        assert main(["info", "--store", uri]) == 2
        assert message in capsys.readouterr().err
    assert "bad Redis store URI" not in message and shows_no_password(message), message
    return message


def test_a_refused_connection_names_the_address(capsys):
    port = free_port()
    message = _refusal(f"redis://:{quote(SECRET, safe='')}@127.0.0.1:{port}/0", capsys)
    assert f"connection refused by 127.0.0.1:{port}" in message


def test_a_wrong_or_missing_password_says_so(secured, capsys):
    host = f"127.0.0.1:{secured.port}"
    message = _refusal(f"redis://:{quote(WRONG, safe='')}@{host}/0", capsys)
    assert f"authentication failed at {host}: wrong password" in message
    assert f"{host} requires a password, and the URI gives none" in _refusal(f"redis://{host}/0", capsys)


def test_an_unknown_host_a_missing_socket_and_a_missing_db_are_named(secured, capsys):
    encoded = quote(SECRET, safe="")
    assert "unknown host 'nosuchhost.invalid'" in _refusal(f"redis://:{encoded}@nosuchhost.invalid:6379/0", capsys)
    missing = f"{secured.socket}.gone"
    assert f"no Unix socket at {missing}" in _refusal(f"unix://{missing}?password={encoded}", capsys)
    host = f"127.0.0.1:{secured.port}"
    assert f"{host} has no such db" in _refusal(f"redis://:{encoded}@{host}/99", capsys)


def test_a_server_that_never_answers_times_out_with_the_timeouts_named(capsys):
    with socket.socket() as silent:  # accepts connections (the kernel does) and says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        params = {"socket_timeout": 0.5, "socket_connect_timeout": 0.5}
        message = _refusal(f"redis://:{quote(SECRET, safe='')}@127.0.0.1:{port}/0", capsys, redis_params=params)
    assert f"no answer from 127.0.0.1:{port} in time (socket_connect_timeout 0.5 s, socket_timeout 0.5 s)" in message


# -- eviction and persistence ----------------------------------------------------------------

TEXT = ARTICLES["rail"]
OTHER = ARTICLES["rice"]


@pytest.mark.parametrize("policy", ["allkeys-lru", "volatile-ttl"])
def test_a_server_that_may_evict_is_refused_unless_allowed(policy, capsys, caplog):
    server = start_redis("--maxmemory", "64mb", "--maxmemory-policy", policy)
    try:
        with pytest.raises(StoreError) as refused:
            open_store(server.url(), "evict")
        message = str(refused.value)
        assert f"maxmemory-policy {policy}" in message and "NEARDUP_REDIS_ALLOW_EVICTION" in message
        assert "noeviction" in message
        assert main(["info", "--store", server.url()]) == 2
        assert f"maxmemory-policy {policy}" in capsys.readouterr().err
        with caplog.at_level(logging.ERROR, logger="scrapy_neardup"), pytest.raises(CloseSpider):
            make_pipeline(NEARDUP_STORE=server.url(), NEARDUP_NAMESPACE="evict")
        assert f"maxmemory-policy {policy}" in caplog.text
        caplog.clear()

        with caplog.at_level(logging.WARNING, logger="scrapy_neardup"):
            pipeline = make_pipeline(NEARDUP_STORE=server.url(), NEARDUP_REDIS_ALLOW_EVICTION=True)
            pipeline.close_spider()
        assert "accepted: NEARDUP_REDIS_ALLOW_EVICTION" in caplog.text
        assert main(["info", "--store", server.url(), "--allow-eviction"]) == 2  # no store: not made
        open_store(server.url(), allow_eviction=True).close()
        assert main(["info", "--store", server.url(), "--allow-eviction"]) == 0
        server.client().config_set("maxmemory-policy", "noeviction")
        open_store(server.url(), "evict").close()
    finally:
        server.stop()


def test_without_config_the_policy_is_read_from_info(caplog):
    server = start_redis("--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lfu", "--rename-command", "CONFIG", "")
    try:
        with pytest.raises(StoreError, match="maxmemory-policy allkeys-lfu"):
            open_store(server.url(), "managed")
    finally:
        server.stop()
    server = start_redis("--rename-command", "CONFIG", "", "--rename-command", "INFO", "")
    try:
        with caplog.at_level(logging.WARNING, logger="scrapy_neardup"):
            open_store(server.url(), "managed").close()
        assert "could not read the maxmemory-policy" in caplog.text
    finally:
        server.stop()


def test_a_server_without_persistence_is_refused_unless_allowed(caplog, capsys):
    """save '' and appendonly no: a restart empties the store, so it is refused at open like an
    evicting server, naming what to change; NEARDUP_REDIS_ALLOW_NO_PERSISTENCE (neardup
    --allow-no-persistence) opens it with one warning a process."""
    server = start_redis(persistent=False)
    try:
        with pytest.raises(StoreUnavailable) as refused:
            open_store(server.url(), "a")
        said = str(refused.value)
        assert "keeps no data across a restart" in said and "appendonly yes" in said
        assert "NEARDUP_REDIS_ALLOW_NO_PERSISTENCE" in said and "--allow-no-persistence" in said
        assert main(["info", "--store", server.url(), "--namespace", "a"]) == 2
        assert "keeps no data across a restart" in capsys.readouterr().err
        with caplog.at_level(logging.WARNING, logger="scrapy_neardup"):
            open_store(server.url(), "a", redis_allow_no_persistence=True).close()
            open_store(server.url(), "b", redis_allow_no_persistence=True).close()
        warnings = [r.getMessage() for r in caplog.records if "keeps no data across a restart" in r.getMessage()]
        assert len(warnings) == 1 and "accepted: NEARDUP_REDIS_ALLOW_NO_PERSISTENCE" in warnings[0]
        pipeline = make_pipeline(NEARDUP_STORE=server.url(), NEARDUP_REDIS_ALLOW_NO_PERSISTENCE=True)
        pipeline.close_spider()
        server.client().config_set("appendonly", "yes")  # persistence switched on: it opens
        open_store(server.url(), "c").close()
    finally:
        server.stop()


def test_a_restart_without_persistence_stops_the_process_that_had_the_store_open(caplog, monkeypatch):
    monkeypatch.setattr(receipts, "RECORD_EVERY", 0.0)  # the receipt follows every check
    server = start_redis(persistent=False)
    allowed = {"redis_allow_no_persistence": True}
    try:
        running = open_store(server.url(), "crawl", **allowed)
        assert Detector(running).check("https://a.example/rail", TEXT).status == UNIQUE
        server.restart()  # comes back empty
        with pytest.raises(StoreLost) as lost:
            Detector(running).check("https://b.example/rail", "转载：" + TEXT)
        assert "lost its data" in str(lost.value) and "appendonly yes" in str(lost.value)
        for call in (running.count, lambda: running.commit(1), lambda: running.remove(1)):
            with pytest.raises(StoreLost):
                call()
        # A process opening it now is told what was lost, and starts a new store; the first
        # one still stops.
        with caplog.at_level(logging.WARNING, logger="scrapy_neardup"):
            fresh = open_store(server.url(), "crawl", **allowed)
        assert "is empty, but it had handed out ids up to 1" in caplog.text
        with fresh:
            assert Detector(fresh).check("https://c.example/rice", OTHER).status == UNIQUE
            with pytest.raises(StoreLost):
                Detector(running).check("https://b.example/rail", "转载：" + TEXT)
            assert fresh.count() == 1
        running.close()
    finally:
        server.stop()


def test_a_restart_with_persistence_keeps_the_store_and_its_marker():
    # appendfsync always: every write is in the file before the reply, so a kill loses none
    # (with everysec a write may wait for a busy fsync, and the kill can come first).
    server = start_redis("--appendonly", "yes", "--appendfsync", "always")
    try:
        with open_store(server.url(), "crawl") as running:
            assert Detector(running).check("https://a.example/rail", TEXT).status == UNIQUE
            server.restart()
            verdict = Detector(running).check("https://b.example/rail", "转载：" + TEXT)
            assert verdict.status == DUPLICATE and verdict.duplicate_of == "https://a.example/rail"
    finally:
        server.stop()


def test_a_namespace_with_documents_but_no_meta_is_refused_at_open():
    server = start_redis()
    try:
        with open_store(server.url(), "partial") as store:
            Detector(store).check("https://a.example/rail", TEXT)
        server.client().delete("neardup:{partial}:meta")  # as an evicting server may do
        with pytest.raises(StoreLost, match="holds documents but no meta key"):
            open_store(server.url(), "partial")
    finally:
        server.stop()


def test_a_crawl_stops_when_redis_comes_back_empty(tmp_path):
    server = start_redis()
    restarted = threading.Event()

    def restart_redis(path: str) -> None:
        """At the third article, once the first two are stored, restart Redis empty. Later pages
        come slowly: store calls do not hold the crawl up, so the stop must outrun the downloads."""
        if path == "/":
            return
        if restarted.is_set():
            time.sleep(0.5)
            return
        seen.append(path)
        if len(seen) == 3:
            server.wait_for_documents(2)
            restarted.set()
            server.restart()

    seen: list[str] = []
    site = Site(site_pages("a"), {}, on_get=restart_redis)
    try:
        run = crawl(tmp_path, "restart", site.root, server.url(0), CONCURRENT_REQUESTS=1)
        _, err = run.communicate(timeout=300)
    finally:
        site.close()
        server.stop()
    assert restarted.is_set()
    assert "neardup_store_lost" in err and "lost its data" in err and "appendonly yes" in err
    kept = (tmp_path / "restart.jsonl").read_text().splitlines()
    assert len(kept) < len(ARTICLES)  # stopped before the end
    stats = json.loads((tmp_path / "restart.json").read_text())
    assert stats["neardup/unique"] >= 2 and stats["neardup/store_error"] >= 1


@pytest.mark.parametrize("store_thread", [False, True], ids=["inline", "store thread"])
def test_a_crawl_waits_for_redis_restarted_within_the_bound_and_checks_every_item(tmp_path, store_thread):
    """Redis is killed mid-crawl and started again 2 s later, with its data (appendonly, fsync
    always): the items that met the outage wait for it and are checked; the crawl ends
    normally with every story kept once, nothing passed unchecked, no reservation left."""
    server = start_redis("--appendonly", "yes", "--appendfsync", "always")
    killed, back = threading.Event(), threading.Event()
    seen: list[str] = []

    def kill_and_restart(path: str) -> None:
        if path == "/" or killed.is_set():
            return
        seen.append(path)
        if len(seen) == 4:  # once the first stories are stored
            server.wait_for_documents(2)
            server.kill()
            killed.set()
            threading.Timer(2.0, lambda: (server.start(), back.set())).start()

    pages = 40
    site = Site(numbered_pages(pages), {}, on_get=kill_and_restart)
    try:
        run = crawl(
            tmp_path,
            "back",
            site.root,
            server.url(0),
            CONCURRENT_REQUESTS=1,
            NEARDUP_STORE_DOWN_TIMEOUT=60,
            NEARDUP_STORE_THREAD=store_thread,
            NEARDUP_DEBUG=True,  # every verdict logged, to show in a failure
            LOG_LEVEL="DEBUG",
        )
        _, err = run.communicate(timeout=300)
        assert back.wait(30) and run.returncode == 0, err[-3000:]
        stats = json.loads((tmp_path / "back.json").read_text())
        kept = [json.loads(line)["url"] for line in (tmp_path / "back.jsonl").read_text().splitlines()]
        told = [line for line in err.splitlines() if "scrapy-neardup" in line or "Dropped:" in line]
        shown = "\n".join([json.dumps(stats, indent=1, sort_keys=True), *told, f"kept: {kept}"])
        assert stats["finish_reason"] == "finished", shown
        stories = len(ARTICLES)
        assert stats["neardup/items"] == pages and stats["neardup/unique"] == stories, shown
        assert stats["neardup/duplicate"] == stats["neardup/dropped"] == pages - stories, shown
        assert stats.get("neardup/unchecked", 0) == 0 and stats["neardup/store_waited"] >= 1, shown
        assert "is down" in err and "answers again after" in err, shown
        assert len(kept) == stories, shown
        with open_store(server.url(0)) as store:
            assert sorted(record.key for record in store.records()) == sorted(kept), shown
            assert store.client.zcard(store.prefix + "p") == 0, shown  # every reservation was committed
    finally:
        site.close()
        server.stop()


@deferred_f_from_coro_f
async def test_a_commit_that_met_an_outage_is_made_once_redis_answers_again():
    server = start_redis("--appendonly", "yes", "--appendfsync", "always")
    try:
        pipeline = make_pipeline(
            NEARDUP_STORE=server.url(), NEARDUP_NAMESPACE="outage", NEARDUP_REDIS_PARAMS={"retries": 0}
        )
        first = await pipeline.process_item({"url": "https://a.example/rail", "text": TEXT})
        server.kill()
        pipeline.item_scraped(first)  # its commit fails: the store is down
        server.start()
        # The next item waits for the back-off, is checked, and the commit is made after it.
        other = await pipeline.process_item({"url": "https://b.example/rice", "text": OTHER})
        pipeline.item_scraped(other)
        with pytest.raises(NearDuplicateItem):
            await pipeline.process_item({"url": "https://c.example/rail", "text": "转载：" + TEXT})
        stats = neardup_stats(pipeline)
        assert stats["neardup/store_waited"] == 1 and stats["neardup/unique"] == 2
        assert "neardup/commit_error" not in stats and "neardup/unchecked" not in stats
        pipeline.close_spider()
        with open_store(server.url(), "outage") as store:
            assert store.count() == 2 and store.client.zcard(store.prefix + "p") == 0
    finally:
        server.stop()


@deferred_f_from_coro_f
async def test_items_pass_unchecked_and_counted_once_redis_is_down_past_the_bound(caplog):
    server = start_redis()
    try:
        pipeline = make_pipeline(
            NEARDUP_STORE=server.url(), NEARDUP_STORE_DOWN_TIMEOUT=0.5, NEARDUP_REDIS_PARAMS={"retries": 0}
        )
        first = await pipeline.process_item({"url": "https://a.example/rail", "text": TEXT})
        pipeline.item_scraped(first)
        server.kill()
        with caplog.at_level(logging.INFO, logger="scrapy_neardup"):
            for n in range(3):  # the first waits out the bound; the store stays given up on
                item = {"url": f"https://b.example/{n}", "text": "转载：" + TEXT}
                assert await pipeline.process_item(item) is item
            pipeline.close_spider()
        stats = neardup_stats(pipeline)
        assert stats["neardup/unchecked"] == stats["neardup/store_down"] == 3
        assert "neardup/store_waited" not in stats and "neardup/store_error" not in stats
        assert caplog.text.count("has been down for") == 1 and "NEARDUP_STORE_DOWN_TIMEOUT = 0.5 s" in caplog.text
        summary = [r for r in caplog.records if " items = " in r.getMessage()]
        assert len(summary) == 1 and summary[0].levelno == logging.WARNING
        assert "+ 3 unchecked (store down or failing)" in summary[0].getMessage()
    finally:
        server.stop()


def _check_again_once_back(store, detector: Detector, documents: list, stored: str) -> None:
    """The pipeline's retry of a new story's check once Redis is back: a story of its own,
    committed; the store then holds it and ``stored``, and no reservation."""
    verdict = detector.check_many(documents, reserve=True)[0]
    assert verdict.status == UNIQUE, verdict.as_dict()
    detector.commit(verdict)
    assert sorted(record.key for record in store.records()) == sorted([documents[0][0], stored])
    assert store.client.zcard(store.prefix + "p") == 0


def test_a_check_applied_but_unanswered_before_an_outage_is_not_its_own_copy_after_it():
    """Redis applied a check (the reservation is in its AOF) but its answer was lost, and Redis
    went down before the check could be sent again. Once Redis is back the item is checked
    again: it must not meet its own reservation and be judged a revisit of itself (a story with
    no kept copy), nor leave that reservation behind."""
    server = start_redis("--appendonly", "yes", "--appendfsync", "always")
    try:
        with open_store(server.url(), "unanswered", retries=0) as store:
            detector = Detector(store)
            first = detector.check("https://a.example/rice", OTHER, reserve=True)
            detector.commit(first)
            rail = [("https://a.example/rail", detector.fingerprint(TEXT))]
            finish = detector.start_many(rail, reserve=True)
            server.wait_for_documents(2, "unanswered")  # applied: in the AOF before its answer
            store._batch.disconnect()  # the answer is lost with the connection
            server.kill()  # and sending the check again finds no server
            with pytest.raises(StoreUnavailable):
                finish()
            server.start()
            _check_again_once_back(store, detector, rail, first.key)
    finally:
        server.stop()


def test_a_removal_that_met_an_outage_goes_out_once_redis_answers_again():
    """A reprint's reservation is taken out with the store's next call; when that call meets a
    Redis that is down, the removal waits for the call after it instead of being forgotten
    (the reservation would stay, a story of its own, until it expired)."""
    server = start_redis("--appendonly", "yes", "--appendfsync", "always")
    try:
        # one retry: the connection the store had open before the outage is closed after it
        with open_store(server.url(), "requeued", retries=1) as store:
            detector = Detector(store)
            first = detector.check_many([("https://a.example/rice", detector.fingerprint(OTHER))], reserve=True)[0]
            detector.commit(first)
            reprint = [("https://b.example/rice", detector.fingerprint("转载：" + OTHER))]
            assert detector.check_many(reprint, reserve=True)[0].status == DUPLICATE  # out with the next call
            server.kill()
            rail = [("https://a.example/rail", detector.fingerprint(TEXT))]
            with pytest.raises(StoreUnavailable):
                detector.check_many(rail, reserve=True)
            server.start()
            _check_again_once_back(store, detector, rail, first.key)
    finally:
        server.stop()
