"""A LevelDB check reads no record of a SimHash bucket member that the verdict rule passes over."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.corpus import random_news, reprint, text

from scrapy_neardup import Detector, Recipe, open_store
from scrapy_neardup.fingerprints.sketch import Sketch
from scrapy_neardup.stores.base import Probe
from scrapy_neardup.stores.leveldb.simhashes import FILE, SimHashes
from scrapy_neardup.stores.leveldb.store import index_folder
from scrapy_neardup.stores.record import PENDING, DocRecord

NEAR = 0b111  # 3 bits from 0: within k = 3
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
    values.put(5, FAR)
    values.put(6, NEAR)
    assert values.far({5, 6, 7, 2}, 0, 3) == {5}  # 7 and 2 unknown: their records are read
    values.save(str(tmp_path))
    assert SimHashes.load(str(tmp_path), last_id=6).far({5, 6}, 0, 3) == {5}
    assert SimHashes.load(str(tmp_path), last_id=5).far({5}, 0, 3) == set()  # ids never given: an old copy
    data = (tmp_path / FILE).read_bytes()
    for broken in (data[:-1], data[:-8] + bytes(8), b"junk"):
        (tmp_path / FILE).write_bytes(broken)
        assert SimHashes.load(str(tmp_path), last_id=6).far({5}, 0, 3) == set()
    assert SimHashes.load(str(tmp_path / "missing"), last_id=6).far({5}, 0, 3) == set()


def test_purged_ids_are_let_go(tmp_path):
    values = SimHashes()
    for doc_id in range(1, 101):
        values.put(doc_id, FAR)
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
            values.put(doc_id, FAR)
        values.append_upto(str(tmp_path), upto)
    data = (tmp_path / FILE).read_bytes()
    assert SimHashes.load(str(tmp_path), last_id=10).far(set(range(1, 11)), 0, 3) == set(range(1, 11))
    (tmp_path / FILE).write_bytes(data[:-3])  # the last segment cut short
    torn = SimHashes.load(str(tmp_path), last_id=10)
    assert torn.far(set(range(1, 11)), 0, 3) == set(range(1, 8))
    torn.put(11, FAR)
    torn.append_upto(str(tmp_path), 11)  # after a torn segment the file is written whole again
    assert SimHashes.load(str(tmp_path), last_id=11).far(set(range(1, 12)), 0, 3) == set(range(1, 8)) | {11}
    assert SimHashes.load(str(tmp_path), last_id=9).far({1}, 0, 3) == set()  # ids never given out
