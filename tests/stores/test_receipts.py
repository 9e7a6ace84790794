"""A store found emptied or rolled back since this machine last used it is reported at open
(stores/receipts.py), on every store kind that keeps its documents across runs: LevelDB, Redis,
Redis Cluster. The conftest gives each test a receipts folder of its own."""

from __future__ import annotations

import json
import logging
import shutil
import sys

import pytest
from support import warm_python
from support.news_corpus import ARTICLES
from support.redis_server import start_redis

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, open_store
from scrapy_neardup.stores import receipts
from scrapy_neardup.stores.base import StoreLost

STORIES = list(ARTICLES.values())


def checked(uri: str, first: int, last: int) -> None:
    """Store stories ``first`` to ``last`` (one id each) and close the store."""
    with open_store(uri, "kept") as store:
        detector = Detector(store)
        for text in STORIES[first:last]:
            assert detector.check(f"https://a.example/{hash(text)}", text).status == UNIQUE


def reopened(uri: str, caplog) -> str | None:
    """What opening the store reports lost (and that it logs it), the store closed again."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="scrapy_neardup"), open_store(uri, "kept") as store:
        lost = store.lost_since_last_use
    assert (lost or "") in caplog.text
    return lost


@pytest.fixture(params=["leveldb", "redis", "cluster"])
def kept_uri(request, tmp_path):
    """An empty store of each kind that keeps its documents, and how to empty it."""
    if request.param == "leveldb":
        path = tmp_path / "store"
        return f"leveldb://{path}", lambda: shutil.rmtree(path)
    if request.param == "redis":
        uri = request.getfixturevalue("redis_url")
        server = request.getfixturevalue("redis_server")
        return uri, lambda: server.client().flushall()
    group = request.getfixturevalue("redis_cluster")
    return request.getfixturevalue("cluster_url"), group.flush


def test_a_store_emptied_since_it_was_last_used_is_reported_once(kept_uri, caplog):
    uri, empty = kept_uri
    checked(uri, 0, 3)
    assert reopened(uri, caplog) is None  # as it was left
    empty()
    lost = reopened(uri, caplog)
    assert lost is not None and "is empty, but it had handed out ids up to 3" in lost
    assert "stop and restore its data" in lost
    assert reopened(uri, caplog) is None  # the new store is the one this machine knows now
    with open_store(uri, "kept") as store:  # and it works as a new store does
        assert Detector(store).check("https://b.example/1", STORIES[0]).status == UNIQUE


def test_a_store_emptied_and_made_anew_by_another_machine_is_reported(
    redis_url, redis_server, caplog, monkeypatch, tmp_path
):
    checked(redis_url, 0, 3)
    redis_server.client().flushall()
    # A process of another machine (receipts of its own) makes the namespace anew and stores more.
    with monkeypatch.context() as elsewhere:
        elsewhere.setenv("NEARDUP_STATE_DIR", str(tmp_path / "other-machine"))
        with open_store(redis_url, "kept") as other:
            for text in STORIES[:5]:
                Detector(other).check(f"https://other.example/{hash(text)}", text)
    lost = reopened(redis_url, caplog)
    assert lost is not None and "is another store: its marker is not the one it had" in lost


def test_a_leveldb_folder_restored_from_an_older_copy_is_reported(tmp_path, caplog):
    path = tmp_path / "store"
    uri = f"leveldb://{path}"
    checked(uri, 0, 2)
    shutil.copytree(path, tmp_path / "copy")
    checked(uri, 2, 5)
    shutil.rmtree(path)
    shutil.copytree(tmp_path / "copy", path)
    lost = reopened(uri, caplog)
    assert lost is not None and "holds ids up to 2 only, but it had handed out ids up to 5" in lost


def test_a_redis_restarted_from_an_older_snapshot_is_reported_and_stops_a_running_process(caplog, monkeypatch):
    monkeypatch.setattr(receipts, "RECORD_EVERY", 0.0)  # the receipt follows every check
    server = start_redis()  # save points, no appendonly: a restart loads the last snapshot
    try:
        running = open_store(server.url(), "kept")
        detector = Detector(running)
        for text in STORIES[:2]:
            detector.check(f"https://a.example/{hash(text)}", text)
        server.client().save()  # the snapshot holds 2 stories
        for text in STORIES[2:5]:
            detector.check(f"https://a.example/{hash(text)}", text)
        server.restart()  # killed: back to the snapshot
        with pytest.raises(StoreLost, match=r"id counter went back \(id 3 handed out, after 5\)"):
            detector.check("https://b.example/1", STORIES[6])
        running.close()
        lost = reopened(server.url(), caplog)  # (the refused check took id 3 before it was refused)
        assert lost is not None and "holds ids up to 3 only, but it had handed out ids up to 5" in lost
        with open_store(server.url(), "kept") as store:  # what the snapshot held is still caught
            assert Detector(store).check("https://b.example/2", STORIES[0]).status == DUPLICATE
    finally:
        server.stop()


def test_neardup_says_what_was_lost(tmp_path):
    """The command line prints the report on stderr, and goes on."""
    path = tmp_path / "store"
    checked(f"leveldb://{path}", 0, 3)
    shutil.rmtree(path)
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "a", "text": STORIES[0]}) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "scrapy_neardup", "dedup", str(tmp_path / "in.jsonl"), "--namespace", "kept"]
    ran = warm_python.run(
        [*command, "--no-progress", "--store", f"leveldb://{path}"], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert "is empty, but it had handed out ids up to 3" in ran.stderr
    assert "1 unique" in ran.stderr


def test_a_receipt_that_cannot_be_written_is_logged_and_the_store_opens(tmp_path, monkeypatch, caplog):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the receipts folder should be", encoding="utf-8")
    monkeypatch.setenv("NEARDUP_STATE_DIR", str(blocked))
    with caplog.at_level(logging.WARNING, logger="scrapy_neardup"):
        checked(f"leveldb://{tmp_path / 'store'}", 0, 1)
    assert "could not write the receipt of store" in caplog.text


def test_only_the_most_recent_receipts_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(receipts, "KEPT", 3)
    for number in range(5):
        checked(f"leveldb://{tmp_path / str(number)}", 0, 1)
    with open(receipts.receipt_path(), encoding="utf-8") as handle:
        kept = json.load(handle)
    assert sorted(name.split("/")[-1] for name in kept) == ["2 namespace=kept", "3 namespace=kept", "4 namespace=kept"]


def test_a_store_deleted_on_purpose_and_forgotten_opens_without_a_report(tmp_path, caplog):
    kept, other = tmp_path / "kept", tmp_path / "other"
    for path in (kept, other):
        checked(f"leveldb://{path}", 0, 2)
        shutil.rmtree(path)
    receipts.forget(f"leveldb://{kept}")
    assert reopened(f"leveldb://{kept}", caplog) is None  # its receipts (every namespace) are gone
    lost = reopened(f"leveldb://{other}", caplog)  # another store's receipt is kept
    assert lost is not None and "is empty" in lost
