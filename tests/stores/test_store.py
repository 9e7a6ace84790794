import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import plyvel
import pytest
from support import child_env
from support.corpus import reprint, text

from scrapy_neardup import Detector, StoreFormatError, StoreUnavailable, open_store
from scrapy_neardup.stores import StoreError, redact
from scrapy_neardup.stores.leveldb.bucketindex import BUCKET_CAP, BucketIndex
from scrapy_neardup.stores.leveldb.store import index_path


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
    run = subprocess.run(
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
        fresh = Detector(store).check("marathon", text("marathon"))
        assert fresh.doc_id > max(kept, gone, pending)
        assert Detector(store).check("copy", reprint("rice")).duplicate_of == "rice"


def test_a_store_held_by_another_process_is_a_clear_error(tmp_path):
    path = tmp_path / "db"
    holder = subprocess.Popen(
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


def test_unknown_and_empty_uris_are_clear_errors():
    with pytest.raises(StoreError, match="unknown store URI"):
        open_store("ftp://example/store")
    with pytest.raises(StoreError, match="names no directory"):
        open_store("leveldb://")


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
    saved_file = index_path(str(path), b"ns:default\x00")
    saved = Path(saved_file).read_bytes()
    assert BucketIndex.load(saved_file).last_id == 1
    with open_store(uri) as store:
        Detector(store).check("museum", text("museum"))
    Path(saved_file).write_bytes(saved)  # as if the run that stored "museum" had died
    caplog.set_level("INFO", logger="scrapy_neardup.stores.leveldb")
    with open_store(uri) as store:
        assert "filed 1 documents written after the saved bucket index" in caplog.text
        assert Detector(store).check("copy", reprint("museum")).duplicate_of == "museum"
        assert Detector(store).check("copy-rice", reprint("rice")).duplicate_of == "rice"
    Path(saved_file).write_bytes(b"garbage")
    with open_store(uri) as store:
        assert Detector(store).check("copy2", reprint("museum")).duplicate_of == "museum"
    os.remove(saved_file)
    with open_store(uri) as store:
        assert Detector(store).check("copy3", reprint("rice")).duplicate_of == "rice"
    # A store opened and closed without a change leaves its saved index as it was.
    with open_store(uri) as store:
        pass
    written = os.stat(saved_file).st_ino
    with open_store(uri) as store:
        assert store.count() == 2
    assert os.stat(saved_file).st_ino == written
    # An index that claims more documents than the store holds (a store restored from an
    # older copy) is not trusted: every record is filed again.
    ahead = BucketIndex(last_id=10**6)
    ahead.save(saved_file)
    with open_store(uri) as store:
        assert Detector(store).check("copy4", reprint("museum")).duplicate_of == "museum"
