"""Redis-only behaviour against a real redis-server: its keys and scripts, batches and lost
answers, TTL by expiry, pending reservations of dead processes, connection errors, passwords,
databases and key prefixes. The store contract is in test_stores.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import redis
from support import warm_python
from support.news_corpus import ARTICLES, corpus, edited
from support.redis_server import start_redis
from support.verdicts import checked_in_batches, renamed

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, Recipe, open_store
from scrapy_neardup.stores import StoreFormatError, StoreUnavailable
from scrapy_neardup.stores.redis.store import RedisStore

# Timeouts long enough that a loaded machine checks the next copy before they run out, short
# enough to wait for.
PENDING_TIMEOUT = 1.0
TTL = 1.0


def bucket_ids(client, namespace: str) -> list[set[int]]:
    """The ids filed in every bucket of a namespace (buckets are fields of shard hashes)."""
    out = []
    for key in client.scan_iter(match=f"neardup:{{{namespace}}}:h:*".encode()):
        for value in client.hgetall(key).values():
            out.append({int.from_bytes(value[i : i + 8], "big") for i in range(0, len(value), 8)})
    return out


def _verdicts(uri: str, recipe: Recipe, **options) -> list[dict]:
    store = open_store(uri, "corpus", recipe, **options)
    try:
        detector = Detector(store)
        return [detector.check(key, text).as_dict() for key, _, text in corpus()]
    finally:
        store.close()


@pytest.mark.parametrize("size", [1, 5, 64])
def test_batches_leave_only_kept_documents_in_the_buckets(redis_url, size):
    """One round trip per batch files every document; the duplicates are taken out again
    (the last batch's with the store's next call, here count). The verdicts are
    test_stores.py's test_batches_give_the_verdicts_of_checks_one_by_one."""
    namespace = f"batch{size}"
    with open_store(redis_url, namespace) as store:
        verdicts = checked_in_batches(store, size)
        kept = {v["doc_id"] for v in verdicts if v["status"] == UNIQUE}
        assert store.count() == len(kept)
        assert set().union(*bucket_ids(store.client, namespace)) == kept


def test_check_texts_overlaps_batches_and_gives_the_verdicts_of_checks_one_by_one(redis_url, tmp_path):
    """Batch k+1 is sent with batch k's duplicates' removal while the next is fingerprinted."""
    from scrapy_neardup.engine.batching import check_texts

    recipe = Recipe()
    one_by_one = _verdicts(f"leveldb://{tmp_path / 'db'}", recipe)
    store = open_store(redis_url, "texts", recipe)
    documents = [(key, text) for key, _, text in corpus()]
    verdicts = [v.as_dict() for v in check_texts(Detector(store), documents, size=4)]
    store.close()  # sends the last batch's removals
    assert renamed(verdicts) == renamed(one_by_one)
    kept = {v["doc_id"] for v in verdicts if v["status"] == UNIQUE}
    assert set().union(*bucket_ids(redis.Redis.from_url(redis_url), "texts")) == kept


def test_a_batch_whose_answer_is_lost_is_sent_again_and_judged_the_same(redis_url):
    """The server applied the batch but the answer never came: sent again, the server gives
    the same answer (ids, filed keys, candidates filed before each), and nothing is filed twice."""
    recipe = Recipe()
    documents = [(key, text) for key, _, text in corpus()]
    with open_store("memory://", "alone", recipe) as store:
        detector = Detector(store)
        expected = [detector.check(key, body).as_dict() for key, body in documents]
    with open_store(redis_url, "lost", recipe) as store:
        detector = Detector(store)
        prints = [(key, detector.fingerprint(body)) for key, body in documents]
        half = len(prints) // 2
        first = detector.check_many(prints[:half])
        finish = detector.start_many(prints[half:])
        store._batch.disconnect()  # the answer is lost with the connection
        second = finish()
        got = [v.as_dict() for v in first + second]
        kept = {v["doc_id"] for v in got if v["status"] == UNIQUE}
        assert store.count() == len(kept)  # the second filings were taken out again
        assert set().union(*bucket_ids(store.client, "lost")) == kept
    assert renamed(got) == renamed(expected)


def test_a_batch_never_matches_a_duplicate_of_the_same_batch(redis_url):
    """i reprints X with a second story added; j keeps that second story and a little of X.
    One by one, i is removed before j is checked, and j, far from X, is a story of its own.
    In a batch, j's candidates include i: verification must skip it."""
    first, second = list(ARTICLES.values())[:2]
    x = first
    i = f"{first}\n{second}"
    j = f"{second}\n{first[: len(first) // 4]}"
    documents = [("https://x.example/1", x), ("https://i.example/1", i), ("https://j.example/1", j)]
    with open_store("memory://", "alone", Recipe()) as store:
        detector = Detector(store)
        expected = [detector.check(key, text).as_dict() for key, text in documents]
    assert [v["status"] for v in expected] == [UNIQUE, DUPLICATE, UNIQUE]
    with open_store(redis_url, "together", Recipe()) as store:
        detector = Detector(store)
        batch = detector.check_many([(key, detector.fingerprint(text)) for key, text in documents])
    assert renamed([v.as_dict() for v in batch]) == renamed(expected)


def test_two_dedup_runs_share_one_server(redis_url, tmp_path):
    """``neardup dedup --store redis://...`` from two processes at once: each story kept once."""
    names = list(ARTICLES)
    inputs = {}
    for run, (own, other) in enumerate([(names[:4], names[4:]), (names[4:], names[:4])]):
        lines = [{"url": f"https://{run}.example/{n}", "text": ARTICLES[n]} for n in own]
        lines += [{"url": f"https://{run}.example/{n}", "text": f"转载自{run}号网\n{ARTICLES[n]}"} for n in other]
        inputs[run] = tmp_path / f"in{run}.jsonl"
        inputs[run].write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    runs = [
        warm_python.popen(
            [
                sys.executable,
                "-m",
                "scrapy_neardup.cli",
                "dedup",
                str(path),
                "-o",
                str(tmp_path / f"out{run}.jsonl"),
                "--store",
                redis_url,
                "--namespace",
                "cli",
                "--key-field",
                "url",
                "--drop",
                "--no-progress",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for run, path in inputs.items()
    ]
    for process in runs:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
    kept = [json.loads(line) for run in inputs for line in (tmp_path / f"out{run}.jsonl").read_text().splitlines()]
    assert sorted(item["url"].rsplit("/", 1)[1] for item in kept) == sorted(names)
    with open_store(redis_url, "cli") as store:
        assert store.count() == len(names)


def test_another_format_version_is_refused(redis_url, redis_server):
    client = redis_server.client()
    client.set("neardup:{old}:meta", b'{"format": 99, "recipe": {}}')
    with pytest.raises(StoreFormatError, match="format version 99"):
        open_store(redis_url, "old")


def test_namespaces_and_databases_are_apart_in_their_keys(redis_server, redis_url):
    text = ARTICLES["museum"]
    with open_store(redis_url, "site-a") as a, open_store(redis_url, "site-b") as b:
        Detector(a).check("a", text)
        Detector(b).check("b", text)
    with open_store(redis_server.url(5), "site-a") as other_db:
        assert other_db.count() == 0
    keys = redis_server.client().keys("*")
    assert keys and all(k.startswith((b"neardup:{site-a}:", b"neardup:{site-b}:")) for k in keys)
    with open_store(redis_url, "site-a", key_prefix="crawl2") as prefixed:
        assert prefixed.count() == 0
        assert prefixed.prefix == "crawl2:{site-a}:"


def test_commit_and_remove_leave_only_committed_keys(redis_url, redis_server):
    """The contract part (states, release, remove by another object) is in test_stores.py."""
    client = redis_server.client()
    with open_store(redis_url, "reserve") as store:
        detector = Detector(store)
        kept = detector.check("https://a.example/chip", ARTICLES["chip"], reserve=True)
        detector.commit(kept)
        assert client.zcard("neardup:{reserve}:p") == 0
        assert client.pttl(f"neardup:{{reserve}}:r:{kept.doc_id}") == -1  # permanent
        dropped = detector.check("https://a.example/port", ARTICLES["port"], reserve=True)
        detector.release(dropped)
        # Every bucket left holds the committed document only.
        buckets = bucket_ids(client, "reserve")
        assert len(buckets) >= 10 and all(ids == {kept.doc_id} for ids in buckets)
        again = detector.check("https://b.example/port", ARTICLES["port"])
        # remove() without the client-side cache (another process, a new store object).
        with open_store(redis_url, "reserve") as other:
            other.remove(again.doc_id)
        assert all(ids == {kept.doc_id} for ids in bucket_ids(client, "reserve"))


def test_pending_reservation_of_a_dead_process_expires(redis_url, redis_server):
    crashed = open_store(redis_url, "pending", pending_timeout=PENDING_TIMEOUT)
    Detector(crashed).check("https://a.example/flood", ARTICLES["flood"], reserve=True)
    crashed.client.close()  # the process dies before commit or release
    store = open_store(redis_url, "pending", pending_timeout=PENDING_TIMEOUT)
    try:
        detector = Detector(store)
        assert detector.check("https://b.example/flood", edited(ARTICLES["flood"])).status == DUPLICATE
        time.sleep(PENDING_TIMEOUT + 0.3)
        fresh = detector.check("https://c.example/flood", edited(ARTICLES["flood"]))
        assert fresh.status == UNIQUE  # the dead reservation no longer blocks the story
        assert store.count() == 1
        assert redis_server.client().zcard("neardup:{pending}:p") == 0

        # A committed reservation outlives the timeout.
        kept = detector.check("https://a.example/rice", ARTICLES["rice"], reserve=True)
        detector.commit(kept)
        time.sleep(PENDING_TIMEOUT + 0.3)
        assert detector.check("https://b.example/rice", ARTICLES["rice"] + "（完）").status == DUPLICATE
        assert store.count() == 2
    finally:
        store.close()


def test_a_query_skips_the_entries_of_an_expired_reservation_and_leaves_them(redis_url, redis_server):
    store = open_store(redis_url, "stale", pending_timeout=PENDING_TIMEOUT)
    try:
        detector = Detector(store)
        detector.check("https://a.example/flood", ARTICLES["flood"], reserve=True)
        detector.check("https://a.example/rice", ARTICLES["rice"])
        time.sleep(PENDING_TIMEOUT + 0.3)  # the reservation's record expires; its bucket entries stay until a check
        client = redis_server.client()
        before = {key: client.dump(key) for key in client.scan_iter("neardup:{stale}:*")}
        assert detector.query(edited(ARTICLES["flood"])) == []
        assert [s.key for s in detector.query(edited(ARTICLES["rice"]))] == ["https://a.example/rice"]
        assert {key: client.dump(key) for key in client.scan_iter("neardup:{stale}:*")} == before
    finally:
        store.close()


def test_ttl_expires_records_and_buckets(redis_url, redis_server):
    client = redis_server.client()
    store = open_store(redis_url, "ttl", ttl=TTL)
    try:
        detector = Detector(store)
        first = detector.check("https://a.example/library", ARTICLES["library"])
        assert 0 < client.pttl(f"neardup:{{ttl}}:r:{first.doc_id}") <= TTL * 1000
        shards = list(client.scan_iter(match=b"neardup:{ttl}:h:*"))
        assert shards and all(0 < client.pttl(key) <= TTL * 1250 for key in shards)  # window end (ttl / 4) + ttl
        assert detector.check("https://b.example/library", ARTICLES["library"]).status == DUPLICATE
        time.sleep(TTL * 1.5)
        assert detector.check("https://c.example/library", ARTICLES["library"]).status == UNIQUE
        time.sleep(TTL * 1.75)
        assert store.count() == 0
        left = {key.rsplit(b":", 1)[-1] for key in client.scan_iter(match=b"neardup:{ttl}:*")}
        assert left <= {b"meta", b"mark", b"n", b"ops", b"t"}  # bounded: no record or bucket outlives the window
    finally:
        store.close()


def test_ttl_window_follows_document_time(redis_url):
    """Members older than the window are trimmed by the next document that touches the bucket."""
    now = [1_000_000.0]
    store = open_store(redis_url, "window", ttl=3600)
    try:
        detector = Detector(store, clock=lambda: now[0])
        detector.check("https://a.example/marathon", ARTICLES["marathon"])
        now[0] += 1800
        assert detector.check("https://b.example/marathon", ARTICLES["marathon"]).status == DUPLICATE
        now[0] += 3600
        assert detector.check("https://c.example/marathon", ARTICLES["marathon"]).status == UNIQUE
    finally:
        store.close()


def test_purge_takes_the_documents_out_of_their_buckets(redis_url, redis_server):
    """The contract part (counts, verdicts after a purge) is in test_stores.py."""
    now = [1_000.0]
    with open_store(redis_url, "purge") as store:
        detector = Detector(store, clock=lambda: now[0])
        ids = []
        for name, body in ARTICLES.items():
            ids.append(detector.check(f"https://a.example/{name}", body).doc_id)
            now[0] += 10
        assert store.purge(1_000.0 + 40) == 4  # the first four stories
        assert set().union(*bucket_ids(redis_server.client(), "purge")) == set(ids[4:])


def test_retried_call_is_applied_once(redis_url):
    """A check-and-add whose answer was lost and is sent again must not file the document twice."""
    store = open_store(redis_url, "retry")
    try:
        detector = Detector(store)
        detector.check("https://a.example/rail", ARTICLES["rail"])
        seq = next(store._seq)
        store._seq = iter([seq, seq])  # the next call and its retry carry the same sequence number
        first = detector.check("https://a.example/port", ARTICLES["port"])
        retried = detector.check("https://a.example/port", ARTICLES["port"])
        assert first.status == retried.status == UNIQUE
        assert retried.doc_id == first.doc_id
        assert store.count() == 2
    finally:
        store.close()


def test_lost_connection_is_retried(redis_url, redis_server):
    store = open_store(redis_url, "reconnect")
    try:
        detector = Detector(store)
        detector.check("https://a.example/rail", ARTICLES["rail"])
        admin = redis_server.client()
        assert admin.client_kill_filter(_type="normal", skipme=True) >= 1  # every store connection
        verdict = detector.check("https://b.example/rail", edited(ARTICLES["rail"]))
        assert verdict.status == DUPLICATE
    finally:
        store.close()


def test_server_gone_mid_crawl_raises_store_unavailable():
    server = start_redis(password="s3cret-pw")
    store = open_store(server.url(0), "gone", retries=2)
    try:
        Detector(store).check("https://a.example/rail", ARTICLES["rail"])
        server.stop()
        with pytest.raises(StoreUnavailable) as caught:
            Detector(store).check("https://b.example/rail", ARTICLES["rail"])
        message = str(caught.value)
        assert f"127.0.0.1:{server.port}" in message
        assert "s3cret-pw" not in message
    finally:
        store.close()
        server.stop()


def test_unreachable_server_message_hides_password(redis_server):
    from support.redis_server import free_port

    port = free_port()
    with pytest.raises(StoreUnavailable) as caught:
        open_store(f"redis://:hunter2pw@127.0.0.1:{port}/0", retries=0)
    message = str(caught.value)
    assert f"redis://:***@127.0.0.1:{port}/0" in message
    assert "hunter2pw" not in message


def test_password_in_uri():
    server = start_redis(password="p@ss word")
    try:
        quoted = f"redis://:p%40ss%20word@127.0.0.1:{server.port}/2"
        with open_store(quoted, "auth") as store:
            assert Detector(store).check("a", ARTICLES["port"]).status == UNIQUE
            assert store.count() == 1
        assert server.client(2).exists("neardup:{auth}:meta")
        for uri in (f"redis://:badpw123@127.0.0.1:{server.port}/2", f"redis://127.0.0.1:{server.port}/2"):
            with pytest.raises(StoreUnavailable) as caught:
                open_store(uri, "auth", retries=0)
            assert "p@ss" not in str(caught.value) and "badpw123" not in str(caught.value)
    finally:
        server.stop()


def test_ttl_is_part_of_the_layout(redis_url):
    open_store(redis_url, "layout", ttl=3600).close()
    with pytest.raises(StoreFormatError, match=r"ttl 3600\.0"):
        open_store(redis_url, "layout", ttl=60)
    with open_store(redis_url, "layout") as store:  # no TTL given: the store's own
        assert store.ttl == 3600
    open_store(redis_url, "layout", ttl=3600).close()
    open_store(redis_url, "forever").close()
    with pytest.raises(StoreFormatError, match="created with ttl None"):
        open_store(redis_url, "forever", ttl=60)


def test_constructor_checks_options(redis_url):
    with pytest.raises(ValueError, match="ttl"):
        RedisStore(redis_url, ttl=0)
    with pytest.raises(ValueError, match="pending_timeout"):
        RedisStore(redis_url, pending_timeout=-1)


def _check_in_child(store, key: str, text: str, expect: str, conn) -> None:
    conn.send(Detector(store).check(key, text).status == expect)


def test_a_forked_child_uses_its_own_connection(redis_url):
    """The store keeps one connection: a child must not write into the parent's socket."""
    import multiprocessing

    (key, _, text), (other_key, _, other) = corpus()[:2]
    with open_store(redis_url, "fork") as store:
        detector = Detector(store)
        assert detector.check(key, text).status == UNIQUE
        receive, send = multiprocessing.Pipe(duplex=False)
        child = multiprocessing.get_context("fork").Process(
            target=_check_in_child, args=(store, other_key, other, UNIQUE, send)
        )
        child.start()
        assert receive.recv() and child.join(30) is None and child.exitcode == 0
        copy = detector.check("https://b.example/copy", "转载：" + other)
        assert copy.status == DUPLICATE and copy.duplicate_of == other_key
        assert store.count() == 2
