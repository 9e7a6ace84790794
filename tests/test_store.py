import json
import struct
import subprocess
import sys
import textwrap

import plyvel
import pytest

from scrapy_neardup import Detector, Recipe, StoreFormatError, StoreUnavailable, open_store
from scrapy_neardup.stores import StoreError, redact
from scrapy_neardup.stores.bucketfilter import BucketFilter

from corpus import ARTICLES, reprint, text


def test_leveldb_store_survives_a_reopen_with_its_counters(tmp_path):
    uri = f"leveldb://{tmp_path}/db"
    with open_store(uri) as store:
        detector = Detector(store)
        first = [detector.check(name, text(name)) for name in ARTICLES]
    with open_store(uri) as store:
        detector = Detector(store)
        assert store.count() == len(ARTICLES)
        copy = detector.check("copy", reprint("rice"))
        assert copy.duplicate_of == "rice"
        fresh = detector.check("fresh", "\n".join(text(n) for n in ARTICLES)[::-1])
        assert fresh.doc_id > max(v.doc_id for v in first)  # ids are never reused


def test_namespaces_are_kept_apart(tmp_path):
    uri = f"leveldb://{tmp_path}/db"
    with open_store(uri, namespace="one") as one:
        Detector(one).check("a", text("battery"))
    with open_store(uri, namespace="two") as two:
        assert Detector(two).check("b", text("battery")).status == "unique"


def test_another_recipe_is_refused_with_the_differences(tmp_path):
    uri = f"leveldb://{tmp_path}/db"
    open_store(uri, recipe=Recipe(nshash_n=5)).close()
    with pytest.raises(StoreFormatError, match=r"nshash_n: stored 5, configured 7"):
        open_store(uri, recipe=Recipe(nshash_n=7))


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


def test_a_store_held_by_another_process_is_a_clear_error(tmp_path):
    path = tmp_path / "db"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import plyvel, sys, time
            db = plyvel.DB({str(path)!r}, create_if_missing=True)
            print("held", flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
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


def test_bucket_filter_holds_every_added_bucket_and_few_others():
    bucket_filter = BucketFilter(10_000)
    added = [b"s" + i.to_bytes(8, "big") for i in range(10_000)]
    for bucket in added:
        bucket_filter.add(bucket)
    assert all(bucket_filter.may_hold(b) for b in added)
    others = sum(bucket_filter.may_hold(b"h" + i.to_bytes(9, "big")) for i in range(10_000))
    assert others < 600  # 1.4-5% when full
    again = BucketFilter.from_bytes(bucket_filter.to_bytes())
    assert again is not None and all(again.may_hold(b) for b in added)
    assert BucketFilter.from_bytes(b"not a filter") is None


def test_leveldb_bucket_filter_of_a_run_that_died_is_built_again(tmp_path):
    """A saved filter counts only if it covers the store's last document: else a copy is missed."""
    path = tmp_path / "db"
    uri = f"leveldb://{path}"
    with open_store(uri) as store:
        Detector(store).check("rice", text("rice"))
    db = plyvel.DB(str(path))
    saved = db.get(b"ns:default\x00f")
    db.close()
    assert saved and BucketFilter.from_bytes(saved).last_id == 1
    with open_store(uri) as store:
        Detector(store).check("museum", text("museum"))
    db = plyvel.DB(str(path))
    db.put(b"ns:default\x00f", saved)  # as if the run that stored "museum" had died
    db.close()
    with open_store(uri) as store:
        assert Detector(store).check("copy", reprint("museum")).duplicate_of == "museum"
    db = plyvel.DB(str(path))
    db.put(b"ns:default\x00f", b"garbage")
    db.close()
    with open_store(uri) as store:
        assert Detector(store).check("copy2", reprint("museum")).duplicate_of == "museum"
    # A filter of the first layout (no magic, another hash) names the right last id, but its
    # bits are not this version's: it is built again, not read as "no such bucket".
    db = plyvel.DB(str(path))
    last_id = BucketFilter.from_bytes(db.get(b"ns:default\x00f")).last_id
    empty = BucketFilter(0, last_id)
    db.put(b"ns:default\x00f", struct.pack(">QI", last_id, 1) + empty.to_bytes()[16:])
    db.close()
    with open_store(uri) as store:
        assert Detector(store).check("copy3", reprint("museum")).duplicate_of == "museum"


def test_bucket_filter_grows_in_layers_and_keeps_every_bucket():
    bucket_filter = BucketFilter(0)
    added = [b"h" + i.to_bytes(9, "big") for i in range(300_000)]
    bucket_filter.add_all(added)
    assert [layer.capacity for layer in bucket_filter.layers] == [1 << 16, 1 << 16, 1 << 17, 1 << 18]
    again = BucketFilter.from_bytes(bucket_filter.to_bytes())
    for found in (bucket_filter, again):
        assert all(found.may_hold_each(added))
        assert sum(found.may_hold_each([b"s" + i.to_bytes(8, "big") for i in range(10_000)])) < 1500
    assert BucketFilter.from_bytes(bucket_filter.to_bytes()[:-1]) is None
