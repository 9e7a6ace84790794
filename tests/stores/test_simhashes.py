"""A LevelDB check reads no record of a SimHash bucket member that the verdict rule passes over,
nor of a member of another bucket with the same 32-bit key in the index (its signature)."""

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xxhash
from support.corpus import random_news, reprint, text

from scrapy_neardup import Detector, Recipe, open_store
from scrapy_neardup.fingerprints.sketch import Sketch
from scrapy_neardup.stores.base import Probe, key_buckets, sentence_bucket
from scrapy_neardup.stores.leveldb.simhashes import _EARLIER, _HEAD, FILE, SIGNATURE_BITS, SimHashes, signature
from scrapy_neardup.stores.leveldb.store import index_folder
from scrapy_neardup.stores.record import PENDING, DocRecord

NEAR = 0b111 << 40  # 3 bits from 0: within k = 3 (bits a value keeps: the low ones hold the signature)
FAR = (1 << 63) | (1 << 62) | (1 << 61) | (1 << 60)  # 4 bits, all in the last block: shares tables with 0
ALL = (1 << 64) - 1  # shares no table with 0


def record(key: str, simhash: int, state: int = 0) -> DocRecord:
    sketch = Sketch(np.array([1, 2, 3], dtype=np.uint32), 3)
    return DocRecord(0, key, 1.0, simhash, sketch, 500, **({"state": state} if state else {}))


def check(store, key: str, simhash: int, sentence_keys: list[int], state: int = 0):
    probe = Probe(sentence_keys, store.tables.keys(simhash), boilerplate_limit=2)
    return store.check_and_add(probe, record(key, simhash, state))


@pytest.fixture
def store(tmp_path):
    opened = open_store(f"leveldb://{tmp_path / 'db'}", recipe=Recipe(tokenizer="rjieba"))
    yield opened
    opened.close()


def read_ids(reservation) -> set[int]:
    return {candidate.doc_id for candidate in reservation.candidates}


def test_a_far_member_of_a_simhash_bucket_is_not_read_a_near_one_is(store):
    far = check(store, "far", FAR, [11]).doc_id
    near = check(store, "near", NEAR, [12]).doc_id
    in_buckets = {doc_id for members in store._index.members_each(store.tables.keys(0), 10) for doc_id in members}
    assert in_buckets == {far, near}
    assert read_ids(check(store, "new", 0, [13])) == {near}


def test_a_far_member_sharing_a_boilerplate_key_with_the_document_is_read(store):
    far = check(store, "far", FAR, [21]).doc_id
    check(store, "other", ALL, [21])  # the key is filed by two: boilerplate at limit 2
    found = check(store, "new", 0, [21])
    assert far in read_ids(found)  # the verdict rule judges it: it shares a key
    assert far not in read_ids(check(store, "new2", 0, [22]))  # sharing none, it is passed over


def test_a_far_pending_copy_replacing_another_is_read(store):
    old = check(store, "old", 1 << 50, [31])
    replacing = check(store, "replacing", FAR, [32], state=PENDING)
    claimed = store.get(replacing.doc_id)
    assert store.replace(claimed, store.get(old.doc_id)) == 0
    assert replacing.doc_id in read_ids(check(store, "new", 0, [33]))


def test_simhashes_are_saved_at_close_and_known_after_reopening(tmp_path):
    uri = f"leveldb://{tmp_path / 'db'}"
    with open_store(uri, recipe=Recipe(tokenizer="rjieba")) as first:
        far = check(first, "far", FAR, [41]).doc_id
        folder = index_folder(first.path, first._prefix)
    assert os.path.exists(os.path.join(folder, FILE))
    with open_store(uri, recipe=Recipe(tokenizer="rjieba")) as again:
        assert again._simhashes.far({far}, 0, 3) == {far}
        assert read_ids(check(again, "new", 0, [42])) == set()


def test_a_missing_damaged_or_too_new_file_knows_no_simhash(tmp_path):
    values = SimHashes()
    values.put(5, FAR, [])
    values.put(6, NEAR, [])
    assert values.far({5, 6, 7, 2}, 0, 3) == {5}  # 7 and 2 unknown: their records are read
    values.save(str(tmp_path))
    assert SimHashes.load(str(tmp_path), last_id=6).far({5, 6}, 0, 3) == {5}
    assert SimHashes.load(str(tmp_path), last_id=5).far({5}, 0, 3) == set()  # ids never given: an old copy
    data = (tmp_path / FILE).read_bytes()
    for broken in (data[:-1], data[:-8] + bytes(8), b"junk"):
        (tmp_path / FILE).write_bytes(broken)
        assert SimHashes.load(str(tmp_path), last_id=6).far({5}, 0, 3) == set()
    assert SimHashes.load(str(tmp_path / "missing"), last_id=6).far({5}, 0, 3) == set()


def test_the_kernel_finds_the_far_ids_the_python_loop_finds():
    rng = np.random.default_rng(3)
    values = SimHashes(base=40)
    for doc_id in range(40, 1040):
        # a tenth unknown (0), the others 0 to 9 bits away from the probe's SimHash
        flips = sum(1 << int(bit) for bit in rng.choice(64, int(rng.integers(0, 10)), replace=False))
        values.put(doc_id, 0 if doc_id % 10 == 0 else PROBE ^ flips, [])
    asked = [int(i) for i in rng.integers(0, 1200, 400)] + [39, 40, 1039, 1040, 2**40]
    for k in (0, 3, 6):
        far = values.far(set(asked), PROBE, k)
        assert far == values.far(set(asked), PROBE, k, compiled=False)
        assert far and all(40 <= doc_id < 1040 and doc_id % 10 for doc_id in far)


PROBE = 0x9E3779B97F4A7C15


def test_purged_ids_are_let_go(tmp_path):
    values = SimHashes()
    for doc_id in range(1, 101):
        values.put(doc_id, FAR, [])
    values.forget_below(80)
    assert values.far({79, 80, 100}, 0, 3) == {80, 100}
    assert values.memory_bytes == 21 * 8


def test_verdicts_on_a_store_with_far_simhash_members_are_those_of_reading_every_record(tmp_path):
    texts = random_news(60, seed=8) + [text("reservoir"), reprint("reservoir")]
    stores = [open_store(f"leveldb://{tmp_path / name}", recipe=Recipe(tokenizer="rjieba")) for name in "ab"]
    stores[1]._far_by_simhash = lambda doc_ids, simhash: set()  # reads every record, as before
    verdicts = []
    for opened in stores:
        detector = Detector(opened)
        verdicts.append([(v.status, v.duplicate_of) for v in (detector.check(f"k{i}", t) for i, t in enumerate(texts))])
        opened.close()
    assert verdicts[0] == verdicts[1]
    assert verdicts[0][-1] == ("duplicate", "k60")


def test_a_killed_run_keeps_the_simhashes_of_its_flushed_documents(tmp_path):
    """Each flush of the bucket index appends the SimHashes it covers: without a close, the
    documents stored before it are passed over after reopening as after a clean close."""
    script = f"""
import os, sys
sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(Path(__file__).parents[1])!r}]
from test_simhashes import check, FAR
from scrapy_neardup import Recipe, open_store
store = open_store("leveldb://{tmp_path / "db"}", recipe=Recipe(tokenizer="rjieba"))
store._index.flush_entries = 64
for number in range(40):
    check(store, f"far-{{number}}", FAR, [1000 + number])
store._index.flush()
print(store._index.flushed_upto, flush=True)
os._exit(0)  # no close: what a kill leaves
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    flushed = int(done.stdout.split()[-1])
    assert flushed == 40  # every document in a run: none is filed again (nor learnt) at open
    with open_store(f"leveldb://{tmp_path / 'db'}", recipe=Recipe(tokenizer="rjieba")) as again:
        assert again._simhashes.far(set(range(1, 41)), 0, 3) == set(range(1, 41))


def test_segments_are_read_up_to_one_cut_short(tmp_path):
    values = SimHashes()
    for upto in (4, 7, 10):  # no file at first: written whole, then two segments
        for doc_id in range(upto - 2 if upto > 4 else 1, upto + 1):
            values.put(doc_id, FAR, [])
        values.append_upto(str(tmp_path), upto)
    data = (tmp_path / FILE).read_bytes()
    assert SimHashes.load(str(tmp_path), last_id=10).far(set(range(1, 11)), 0, 3) == set(range(1, 11))
    (tmp_path / FILE).write_bytes(data[:-3])  # the last segment cut short
    torn = SimHashes.load(str(tmp_path), last_id=10)
    assert torn.far(set(range(1, 11)), 0, 3) == set(range(1, 8))
    torn.put(11, FAR, [])
    torn.append_upto(str(tmp_path), 11)  # after a torn segment the file is written whole again
    assert SimHashes.load(str(tmp_path), last_id=11).far(set(range(1, 12)), 0, 3) == set(range(1, 8)) | {11}
    assert SimHashes.load(str(tmp_path), last_id=9).far({1}, 0, 3) == set()  # ids never given out


# ------------------------------------------------------------------ signatures


def bit(bucket: bytes) -> int:
    return (xxhash.xxh64_intdigest(bucket) >> 32) % SIGNATURE_BITS


def colliding_keys() -> tuple[int, int]:
    """Two sentence keys whose buckets have the same 32-bit key in the index and another
    signature bit (a birthday search over sentence keys 0, 1, 2...)."""
    seen: dict[int, int] = {}
    for key in itertools.count():
        bucket = sentence_bucket(key)
        low = xxhash.xxh64_intdigest(bucket) & 0xFFFFFFFF
        other = seen.setdefault(low, key)
        if other != key and bit(sentence_bucket(other)) != bit(bucket):
            return other, key
    raise AssertionError("unreachable")


KEY_A, KEY_B = colliding_keys()


def name_without(bucket_bit: int) -> str:
    """A document key whose own bucket does not set ``bucket_bit``."""
    return next(name for name in (f"doc-{n}" for n in range(100)) if bit(key_buckets(name)[0]) != bucket_bit)


def members(store, key: int, signed: bool = True) -> list[int]:
    index = store._index
    return index.members_each([sentence_bucket(key)], 10, store._simhashes if signed else None)[0]


def test_the_keys_collide_in_the_index_and_differ_in_their_signature_bit():
    a, b = sentence_bucket(KEY_A), sentence_bucket(KEY_B)
    assert a != b and xxhash.xxh64_intdigest(a) & 0xFFFFFFFF == xxhash.xxh64_intdigest(b) & 0xFFFFFFFF
    assert bit(a) != bit(b)


@pytest.mark.parametrize("in_run", [False, True], ids=["newest table", "run on disk"])
def test_a_member_of_the_other_bucket_is_left_out_and_never_read(store, in_run):
    stored = check(store, name_without(bit(sentence_bucket(KEY_B))), FAR, [KEY_A]).doc_id
    if in_run:
        store._index.flush()
        assert store._index.runs
    assert members(store, KEY_B, signed=False) == [stored]  # the index alone cannot tell them apart
    assert members(store, KEY_B) == []
    assert members(store, KEY_A) == [stored]
    assert store._index._members_python([sentence_bucket(KEY_B), sentence_bucket(KEY_A)], 10, store._simhashes) == [
        [],
        [stored],
    ]
    asked = []
    reads = store._encoded
    store._encoded = lambda doc_ids: asked.extend(doc_ids) or reads(doc_ids)
    found = check(store, "new", 0, [KEY_B])  # far in SimHash: a candidate only by the key
    assert found.candidates == [] and stored not in asked
    store.remove(found.doc_id)
    assert {c.doc_id for c in check(store, "newer", 0, [KEY_A]).candidates} == {stored}


def test_a_copy_that_replaced_another_keeps_its_signature(store):
    old = store.get(check(store, "old", FAR, [7]).doc_id)
    replacing = store.get(check(store, name_without(bit(sentence_bucket(KEY_B))), FAR, [KEY_A], state=PENDING).doc_id)
    assert store.replace(replacing, old) == 0
    store.commit(replacing.doc_id)
    assert members(store, KEY_A) == [replacing.doc_id]
    assert members(store, KEY_B) == []


def test_signatures_are_known_after_reopening(tmp_path):
    uri = f"leveldb://{tmp_path / 'db'}"
    with open_store(uri, recipe=Recipe(tokenizer="rjieba")) as first:
        stored = check(first, name_without(bit(sentence_bucket(KEY_B))), FAR, [KEY_A]).doc_id
    with open_store(uri, recipe=Recipe(tokenizer="rjieba")) as again:
        assert members(again, KEY_A) == [stored]
        assert members(again, KEY_B) == []


def test_a_file_of_whole_simhashes_leaves_every_member_in_and_is_written_anew(tmp_path):
    """A store saved before signatures: its documents may be in any bucket, as before."""
    simhash = FAR | 0b1011  # low bits: a whole SimHash's, where signatures go now
    values = np.array([simhash, 0], dtype="<u8").tobytes()
    (tmp_path / FILE).write_bytes(_HEAD.pack(_EARLIER[0], 5, 2, xxhash.xxh64_intdigest(values)) + values)
    loaded = SimHashes.load(str(tmp_path), last_id=6)
    assert loaded.knows(5) and not loaded.knows(6)
    assert all(loaded.may_be_filed(5, bit(sentence_bucket(key))) for key in range(50))
    assert loaded.far({5, 6}, 0, 3) == {5} and loaded.far({5}, FAR, 3) == set()
    loaded.put(7, FAR, [sentence_bucket(KEY_A)])
    loaded.append_upto(str(tmp_path), 7)  # not appended to the earlier layout: written whole
    again = SimHashes.load(str(tmp_path), last_id=7)
    assert (tmp_path / FILE).read_bytes()[:8] != _EARLIER[0]
    assert again.may_be_filed(5, bit(sentence_bucket(KEY_B))) and not again.may_be_filed(7, bit(sentence_bucket(KEY_B)))


def test_the_kernel_signs_buckets_as_python_does():
    buckets = [sentence_bucket(key) for key in range(40)] + key_buckets("page") + [b"h\x00" + bytes(8)]
    for size in range(len(buckets)):
        assert signature(buckets[:size]) == signature(buckets[:size], compiled=False)
    assert signature([b"h\x01" + bytes(8)]) == 0  # a SimHash table's bucket has no bit


def test_the_index_folder_holds_the_signatures(store):
    check(store, "a", FAR, [KEY_A])
    store._index.flush()
    store.close()
    assert os.path.exists(os.path.join(index_folder(store.path, store._prefix), FILE))
