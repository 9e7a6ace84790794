import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import plyvel
import pytest
from support import child_env, warm_python
from support.corpus import random_news, reprint, text

from scrapy_neardup import Detector, StoreFormatError, StoreUnavailable, open_store
from scrapy_neardup.stores import StoreError, redact
from scrapy_neardup.stores.leveldb import store as leveldb
from scrapy_neardup.stores.leveldb import tieredindex
from scrapy_neardup.stores.leveldb.bucketindex import BUCKET_CAP, BucketIndex
from scrapy_neardup.stores.leveldb.store import index_folder, index_path
from scrapy_neardup.stores.record import COMMITTED, PENDING


def test_another_format_version_is_refused(tmp_path):
    path = tmp_path / "db"
    open_store(f"leveldb://{path}").close()
    db = plyvel.DB(str(path))
    space = db.prefixed_db(b"ns:default\x00")
    meta = json.loads(space.get(b"m"))
    meta["format"] = 999
    space.put(b"m", json.dumps(meta).encode())
    db.close()
    with pytest.raises(StoreFormatError, match="format version 999"):
        open_store(f"leveldb://{path}")


def test_leveldb_ids_are_never_given_twice_after_a_killed_run(tmp_path):
    """A new document writes only its record; the counter is saved at close and with every
    removal. A run that dies after releasing its highest id must not hand that id out again."""
    uri = f"leveldb://{tmp_path}/db"
    run = warm_python.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import os, sys
        from support.corpus import text
        from scrapy_neardup import Detector, open_store
        store = open_store({uri!r})
        detector = Detector(store)
        kept = detector.check("rice", text("rice"), reserve=True)
        detector.commit(kept)
        pending = detector.check("battery", text("battery"), reserve=True)
        gone = detector.check("museum", text("museum"), reserve=True)
        detector.release(gone)  # its item failed: the highest id is taken out again
        print(kept.doc_id, gone.doc_id, pending.doc_id, flush=True)
        os._exit(0)  # no close: as if killed
    """),
        ],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    kept, gone, pending = map(int, run.stdout.split())
    with open_store(uri) as store:
        assert store.count() == 1  # the pending reservation of the dead run was dropped
        assert store.get(kept).state == COMMITTED  # committed by its state byte before the kill
        fresh = Detector(store).check("marathon", text("marathon"))
        assert fresh.doc_id > max(kept, gone, pending)
        assert Detector(store).check("copy", reprint("rice")).duplicate_of == "rice"


def test_a_store_held_by_another_process_is_a_clear_error(tmp_path):
    path = tmp_path / "db"
    holder = warm_python.popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import plyvel, sys, time
            db = plyvel.DB({str(path)!r}, create_if_missing=True)
            print("held", flush=True)
            sys.stdin.read()
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreUnavailable) as error:
            open_store(f"leveldb://{path}")
        message = str(error.value)
        assert str(path) in message and "another process" in message and "redis://" in message
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)


def test_two_opens_in_one_process_share_the_database(tmp_path):
    uri = f"leveldb://{tmp_path}/db"
    first, second = open_store(uri), open_store(uri)
    try:
        Detector(first).check("a", text("museum"))
        assert Detector(second).check("b", reprint("museum")).duplicate_of == "a"
    finally:
        first.close()
        second.close()
    with open_store(uri) as third:  # closed by both: can be opened again
        assert third.count() == 1


def test_pending_reservations_of_a_dead_run_are_dropped_at_open(tmp_path):
    uri = f"leveldb://{tmp_path}/db"
    with open_store(uri) as store:
        detector = Detector(store)
        kept = detector.check("kept", text("library"))
        detector.check("never-stored", text("marathon"), reserve=True)  # the run dies here
    with open_store(uri) as store:
        assert store.count() == 1 and store.get(kept.doc_id) is not None
        assert Detector(store).check("retry", text("marathon")).status == "unique"


def test_a_committed_new_story_is_its_pending_record_with_only_the_state_changed(tmp_path):
    """A new story is committed by its state byte in the stored bytes; the record reads back
    as the pending one encoded committed, its pending mark is gone, and a copy that replaces a
    stored one (its record read and written whole) still takes that copy's place."""
    uri = f"leveldb://{tmp_path}/db"
    with open_store(uri) as store:
        detector = Detector(store, prefer=lambda new, stored: True)  # every later copy replaces
        verdict = detector.check("rice", text("rice"), reserve=True)
        pending = store.get(verdict.doc_id)
        assert pending is not None and pending.state == PENDING
        detector.commit(verdict)
        committed = store.get(verdict.doc_id)
        pending.state = COMMITTED
        assert committed is not None and committed.to_bytes() == pending.to_bytes()
        assert not list(store._db.iterator(prefix=b"p"))
        later = detector.check("rice-copy", reprint("rice"), reserve=True)
        assert later.replaces == "rice" and store.get(later.doc_id).state == PENDING
        detector.commit(later)
        assert store.get(verdict.doc_id) is None and store.get(later.doc_id).state == COMMITTED
        released = detector.check("museum", text("museum"), reserve=True)
        detector.release(released)
        detector.commit(released)  # too late: nothing is stored again
        assert store.get(released.doc_id) is None
        assert not list(store._db.iterator(prefix=b"p"))


def test_unknown_and_empty_uris_are_clear_errors():
    with pytest.raises(StoreError, match="unknown store URI"):
        open_store("ftp://example/store")
    with pytest.raises(StoreError, match="names no directory"):
        open_store("leveldb://")


def test_a_tokenizer_that_cannot_load_fails_before_a_store_is_made(tmp_path):
    """The recipe is resolved (its tokenizer loaded) before the URI builds a store: a wrong
    tokenizer leaves no new LevelDB folder behind."""
    from scrapy_neardup.fingerprints.recipe import Recipe

    with pytest.raises(ValueError, match="unknown tokenizer"):
        open_store(str(tmp_path / "new"), recipe=Recipe(tokenizer="no-such-tokenizer"))
    assert not (tmp_path / "new").exists()


def test_passwords_are_redacted():
    assert redact("redis://:secret@localhost:6379/0") == "redis://:***@localhost:6379/0"
    assert redact("redis://user:secret@host/1") == "redis://user:***@host/1"
    assert redact("leveldb:///data/x") == "leveldb:///data/x"


def test_named_memory_stores_are_shared_by_uri_and_namespace():
    one, same = open_store("memory://shared-a"), open_store("memory://shared-a")
    other_name, other_space = open_store("memory://shared-b"), open_store("memory://shared-a", "x")
    Detector(one).check("a", text("battery"))
    assert same.count() == 1
    assert other_name.count() == 0 and other_space.count() == 0
    assert open_store("memory://").count() == 0


def test_bucket_index_is_saved_and_a_damaged_file_is_refused(tmp_path):
    index = BucketIndex(last_id=7)
    buckets = [b"s" + i.to_bytes(8, "big") for i in range(5000)]  # grows past the first table
    for doc_id, bucket in enumerate(buckets, 1):
        index.add([bucket, b"h\x00shared"], doc_id)
    index.save(str(tmp_path / "index"))
    again = BucketIndex.load(str(tmp_path / "index"))
    assert again is not None and again.last_id == 7 and again.entries == index.entries
    assert again.members_each(buckets[:3], 5) == [[1], [2], [3]]
    assert again.members_each([b"h\x00shared"], 3) == [[1, 2, 3]]  # oldest first
    assert again.members_each([b"h\x00shared"], 10**6)[0] == list(range(1, BUCKET_CAP + 1))  # capped
    data = (tmp_path / "index").read_bytes()
    for broken in (data[:-1], data + b"x", data[:40] + bytes([data[40] ^ 1]) + data[41:], b"junk"):
        (tmp_path / "index").write_bytes(broken)
        assert BucketIndex.load(str(tmp_path / "index")) is None
    assert BucketIndex.load(str(tmp_path / "missing")) is None


def test_leveldb_index_of_a_run_that_died_is_refiled_from_the_records(tmp_path, caplog):
    """The saved index covers the documents up to its last id; those written after it (a run
    killed before close) are filed again from their records, or a copy would be missed."""
    path = tmp_path / "db"
    uri = f"leveldb://{path}"
    with open_store(uri) as store:
        Detector(store).check("rice", text("rice"))
    folder = index_folder(str(path), b"ns:default\x00")
    saved = {name: (Path(folder) / name).read_bytes() for name in os.listdir(folder)}
    assert json.loads(saved["MANIFEST.json"])["flushed_upto"] == 1

    def restore(files):  # the index as a run that died before closing the store left it
        shutil.rmtree(folder)
        os.mkdir(folder)
        for name, data in files.items():
            (Path(folder) / name).write_bytes(data)

    with open_store(uri) as store:
        Detector(store).check("museum", text("museum"))
    restore(saved)
    caplog.set_level("INFO", logger="scrapy_neardup.stores.leveldb")
    with open_store(uri) as store:
        assert "filed 1 documents written after the saved bucket index" in caplog.text
        assert Detector(store).check("copy", reprint("museum")).duplicate_of == "museum"
        assert Detector(store).check("copy-rice", reprint("rice")).duplicate_of == "rice"
    restore({**saved, "MANIFEST.json": b"garbage"})
    with open_store(uri) as store:
        assert Detector(store).check("copy2", reprint("museum")).duplicate_of == "museum"
    shutil.rmtree(folder)
    with open_store(uri) as store:
        assert Detector(store).check("copy3", reprint("rice")).duplicate_of == "rice"
    # A store opened and closed without a change leaves its index as it was.
    with open_store(uri) as store:
        pass
    written = sorted(os.listdir(folder))
    with open_store(uri) as store:
        assert store.count() == 2
    assert sorted(os.listdir(folder)) == written
    # An index that claims more documents than the store holds (a store restored from an
    # older copy) is not trusted: every record is filed again.
    manifest = json.loads((Path(folder) / "MANIFEST.json").read_text())
    (Path(folder) / "MANIFEST.json").write_text(json.dumps({**manifest, "flushed_upto": 10**6}))
    with open_store(uri) as store:
        assert Detector(store).check("copy4", reprint("museum")).duplicate_of == "museum"


FORMAT5_STORE = Path(__file__).parent / "data" / "leveldb-format5-index-file" / "store"


def test_leveldb_store_whose_index_is_one_file_of_an_earlier_version_is_read_whole(tmp_path, caplog):
    """A store written by commit e1e6f5f (format 5, the index in one file, neardup-index-*.bin;
    see make_store.py beside it): three articles covered by the index file, two stored after
    it by a run that never closed. Opened here, the file becomes the first run of the index
    and is removed, the two are filed from their records, and every article is found."""
    path = tmp_path / "db"
    shutil.copytree(FORMAT5_STORE, path)
    old_file = index_path(str(path), b"ns:default\x00")
    assert os.path.exists(old_file) and not os.path.exists(index_folder(str(path), b"ns:default\x00"))
    caplog.set_level("INFO", logger="scrapy_neardup.stores.leveldb")
    with open_store(f"leveldb://{path}") as store:
        assert "filed 2 documents written after the saved bucket index" in caplog.text
        assert store.count() == 5
        assert len(store._index.runs) == 1  # the three of the index file, as a run
        detector = Detector(store)
        for topic in ("rice", "museum", "battery", "reservoir", "marathon"):
            assert [found.key for found in detector.query(reprint(topic)) if found.duplicate] == [topic]
        assert detector.query(text("library")) == []
        assert detector.check("copy-rice", reprint("rice")).duplicate_of == "rice"
    assert not os.path.exists(old_file)
    with open_store(f"leveldb://{path}") as store:  # and again, from the index's own files
        assert [found.key for found in Detector(store).query(reprint("battery"))] == ["battery"]


def test_leveldb_store_of_an_earlier_format_is_refused_at_open(tmp_path):
    """A store of another format version is refused with what to do, its files untouched."""
    path = tmp_path / "db"
    shutil.copytree(FORMAT5_STORE, path)
    db = plyvel.DB(str(path))
    meta = json.loads(db.get(b"ns:default\x00m"))
    db.put(b"ns:default\x00m", json.dumps({**meta, "format": 4}).encode())
    db.close()
    with pytest.raises(StoreFormatError, match="written by format version 4"):
        open_store(f"leveldb://{path}")
    assert os.path.exists(index_path(str(path), b"ns:default\x00"))


def store_bytes(path) -> int:
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names)


def test_leveldb_purge_drops_the_old_runs_and_leaves_a_smaller_store(tmp_path, monkeypatch):
    """Purged ids fall below the index's floor: lookups skip them at once, and the runs that
    hold nothing else are deleted; LevelDB compacts the range the records held."""
    monkeypatch.setattr(tieredindex, "FLUSH_ENTRIES", 3000)
    monkeypatch.setattr(tieredindex, "MERGE_RATIO", 0)  # runs stay apart, however fast the thread merges
    path, now = tmp_path / "db", [1_000.0]
    texts = random_news(1200)
    with open_store(f"leveldb://{path}") as store:
        detector = Detector(store, clock=lambda: now[0])
        for number, news in enumerate(texts):
            now[0] = 1_000.0 + number
            assert detector.check(f"n{number}", news).stored
            if number == 899:
                store._index.flush()  # ids up to 900 in runs of their own
        store._index.wait()
        runs_before = {run.name for run in store._index.runs}
        assert len(runs_before) >= 2
        store.compact()
        before = store_bytes(path)
        assert store.purge(1_000.0 + 900) == 900
        store._index.wait()
        assert store.count() == 300 and store._index.floor == 901
        assert all(run.max_id >= 901 for run in store._index.runs)
        after = store_bytes(path)
        assert after < 0.5 * before, (before, after)
        found = detector.query_many([detector.fingerprint(texts[n]) for n in (0, 899, 900, 1199)])
        assert [[s.key for s in similar if s.duplicate] for similar in found] == [[], [], ["n900"], ["n1199"]]
    with open_store(f"leveldb://{path}") as store:  # the floor comes back from the records
        assert store._index.floor == 901 and store.count() == 300
        assert Detector(store).check("again", texts[1100]).duplicate_of == "n1100"
        assert Detector(store).check("new", texts[10]).stored


def test_leveldb_purge_in_a_thread_leaves_the_checks_of_another_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(tieredindex, "FLUSH_ENTRIES", 3000)
    monkeypatch.setattr(leveldb, "PURGE_BATCH", 50)
    path = tmp_path / "db"
    texts = random_news(1400, seed=9)
    now = [1_000.0]
    with open_store(f"leveldb://{path}") as store:
        detector = Detector(store, clock=lambda: now[0])
        for number, news in enumerate(texts[:1000]):
            now[0] = 1_000.0 + number
            detector.check(f"n{number}", news)
        now[0] = 5_000.0
        purge = threading.Thread(target=lambda: results.append(store.purge(1_000.0 + 800)))
        results: list[int] = []
        purge.start()
        verdicts = [detector.check(f"copy{n}", texts[n]).duplicate_of for n in range(800, 1000)]
        verdicts += [detector.check(f"m{n}", texts[n]).stored for n in range(1000, 1400)]
        purge.join()
        assert results == [800] and store.count() == 600
        assert verdicts == [f"n{n}" for n in range(800, 1000)] + [True] * 400


def test_closing_the_store_stops_a_purge_in_another_thread_at_its_next_batch(tmp_path, monkeypatch):
    monkeypatch.setattr(leveldb, "PURGE_BATCH", 10)
    path = tmp_path / "db"
    texts = random_news(600, seed=11)
    store = open_store(f"leveldb://{path}")
    detector = Detector(store, clock=lambda: 1_000.0)
    for number, news in enumerate(texts):
        detector.check(f"n{number}", news)
    results: list[int] = []
    batches = threading.Semaphore(0)
    original = store._index.set_floor

    def slow_floor(floor):  # a purge batch that takes its time: the close comes meanwhile
        original(floor)
        batches.release()
        time.sleep(0.05)

    store._index.set_floor = slow_floor
    purge = threading.Thread(target=lambda: results.append(store.purge(2_000.0)))
    purge.start()
    batches.acquire()
    store.close()
    purge.join()
    assert 10 <= results[0] < 600
    with open_store(f"leveldb://{path}") as reopened:
        assert reopened.count() == 600 - results[0]
        assert Detector(reopened).check("copy", texts[599]).duplicate_of == "n599"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_run_killed_while_its_index_writes_and_merges_runs_loses_no_stored_document(tmp_path, seed):
    """SIGKILL while the index writes a run (small tables: a run is written every few
    documents, merged every few runs): every document the run had stored is found at open."""
    uri, log = f"leveldb://{tmp_path}/db", tmp_path / "stored"
    killed = warm_python.popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import os
            from support.corpus import random_news
            from scrapy_neardup import Detector, open_store
            from scrapy_neardup.stores.leveldb import tieredindex
            tieredindex.FLUSH_ENTRIES = 300
            texts = random_news(3000, seed={seed})
            detector = Detector(open_store({uri!r}))
            log = os.open({str(log)!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            for number, news in enumerate(texts):
                if detector.check(f"n{{number}}", news).stored:
                    os.write(log, b"%d\\n" % number)
        """),
        ],
        env=child_env(),
    )

    def stored_so_far() -> int:
        return len(log.read_bytes().split()) if log.exists() else 0

    def writing_a_run() -> bool:  # a flush or a merge in the middle of its file
        return any(name.endswith(".partial") for _, _, names in os.walk(tmp_path / "db") for name in names)

    deadline = time.monotonic() + 120
    while stored_so_far() < 100 * seed and time.monotonic() < deadline and killed.poll() is None:
        time.sleep(0.05)
    deadline = time.monotonic() + 10
    while not writing_a_run() and time.monotonic() < deadline and killed.poll() is None:
        time.sleep(0.001)
    killed.kill()
    assert killed.wait() == -9, "the run ended before it was killed"
    stored = [int(number) for number in log.read_bytes().split()]
    assert stored, "the killed run stored nothing before the deadline"
    texts = random_news(3000, seed=seed)
    with open_store(uri) as store:
        detector = Detector(store)
        found = detector.query_many([detector.fingerprint(texts[n]) for n in stored])
        missing = [n for n, similar in zip(stored, found) if f"n{n}" not in [s.key for s in similar if s.duplicate]]
        assert missing == []
        assert store.count() >= len(stored)


def test_leveldb_purge_beside_checks_leaves_a_smaller_store_too(tmp_path, monkeypatch):
    """A paced purge compacts the range it emptied a slice at a time, resting between: LevelDB's
    own compaction seldom goes back to the oldest tables of records written in id order."""
    monkeypatch.setattr(leveldb, "PURGE_BATCH", 100)
    monkeypatch.setattr(leveldb, "COMPACT_SLICE", 300)
    path, now = tmp_path / "db", [1_000.0]
    texts = random_news(1200, seed=5)
    with open_store(f"leveldb://{path}") as store:
        detector = Detector(store, clock=lambda: now[0])
        for number, news in enumerate(texts):
            now[0] = 1_000.0 + number
            assert detector.check(f"n{number}", news).stored
        store.compact()
        before = sum(os.path.getsize(name) for name in glob.glob(str(path / "*.ldb")))
        assert store.purge(1_000.0 + 900, background=True) == 900
        after = sum(os.path.getsize(name) for name in glob.glob(str(path / "*.ldb")))
        assert after < 0.5 * before, (before, after)
        assert store.count() == 300
        assert detector.check("again", texts[1100]).duplicate_of == "n1100"
