"""The LevelDB store's bucket index: a table in memory and sorted runs on disk, against a plain
dict of the same buckets, through flushes, merges, removals, a purge floor and reopening."""

import os
import random
from pathlib import Path

import numpy as np
import pytest

from scrapy_neardup.fingerprints.kernel import kernel
from scrapy_neardup.stores.leveldb import bucketruns, tieredindex
from scrapy_neardup.stores.leveldb.bucketindex import BucketIndex
from scrapy_neardup.stores.leveldb.bucketruns import Run, RunDamaged
from scrapy_neardup.stores.leveldb.tieredindex import IndexDamaged, TieredIndex

PATHS = [True, False] if kernel is not None else [False]


class Model:
    """The buckets as a dict: what every lookup must answer."""

    def __init__(self):
        self.members: dict[bytes, list[int]] = {}
        self.floor = 0

    def add(self, buckets, doc_id):
        for bucket in buckets:
            self.members.setdefault(bucket, []).append(doc_id)

    def remove(self, buckets, doc_id):
        for bucket in buckets:
            self.members[bucket].remove(doc_id)

    def find(self, buckets, limit):
        return [[i for i in self.members.get(b, []) if i >= self.floor][:limit] for b in buckets]


def documents(count, seed=1, shared=40):
    """Each document's buckets: a few of its own, and one of ``shared`` buckets many share."""
    rng = random.Random(seed)
    docs = []
    for doc_id in range(1, count + 1):
        own = [b"s" + rng.getrandbits(64).to_bytes(8, "big") for _ in range(rng.randint(2, 6))]
        docs.append((doc_id, own + [b"h" + rng.randrange(shared).to_bytes(2, "big")]))
    return docs


def add_all(index, model, docs):
    for doc_id, buckets in docs:
        index.add(buckets, doc_id)
        model.add(buckets, doc_id)


def check_all(index, model, docs, rng, limits=(1, 5, 200)):
    sample = [bucket for _, buckets in rng.sample(docs, min(60, len(docs))) for bucket in buckets]
    sample += [b"s-absent-%d" % n for n in range(20)]
    for limit in limits:
        assert index.members_each(sample, limit) == model.find(sample, limit)


@pytest.mark.parametrize("compiled", PATHS)
def test_lookups_match_a_dict_through_flushes_merges_removals_and_a_floor(tmp_path, compiled):
    rng = random.Random(7)
    index = TieredIndex.create(str(tmp_path / "index"), flush_entries=400, compiled=compiled)
    index.start(floor=1)
    model, docs = Model(), documents(3000)
    removed = set()
    for doc_id, buckets in docs:
        index.add(buckets, doc_id)
        model.add(buckets, doc_id)
        if doc_id % 7 == 0:  # a document removed soon, or long after it was filed
            gone_id = rng.choice([doc_id, rng.randrange(1, doc_id + 1)])
            if gone_id not in removed:
                removed.add(gone_id)
                index.remove(docs[gone_id - 1][1], gone_id)
                model.remove(docs[gone_id - 1][1], gone_id)
        if doc_id % 100 == 0:
            index.wait()  # the flush in hand is done: the next table is written as a run too
        if doc_id % 500 == 0:
            check_all(index, model, docs[:doc_id], rng)
    index.wait()
    assert index._next_run > 20 and len(index.runs) <= 4  # flushed many times, merged
    check_all(index, model, docs, rng)
    index.set_floor(1200)  # a purge removed the oldest documents
    model.floor = 1200
    check_all(index, model, docs, rng)
    index.wait()
    assert all(run.max_id >= 1200 for run in index.runs)
    index.close()

    again = TieredIndex.open(str(tmp_path / "index"), compiled=compiled)
    assert again.flushed_upto == 3000
    again.start(floor=1200)
    check_all(again, model, docs, rng)
    again.merge_all()
    assert len(again.runs) == 1 and again.runs[0].min_id >= 1200 and not again.dead
    check_all(again, model, docs, rng)
    again.close()


def test_the_kernel_and_numpy_read_the_same_runs_and_build_the_same_filters(tmp_path):
    if kernel is None:
        pytest.skip("the C kernel is not built")
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 1 << 32, 20000, dtype=np.uint64)
    entries = np.sort((keys << np.uint64(32)) | rng.integers(1, 1 << 32, 20000, dtype=np.uint64))
    built, numpy_built = (np.zeros(64 * bucketruns.filter_blocks(len(entries)), dtype=np.uint8) for _ in range(2))
    bucketruns.add_to_filter(built, entries, compiled=True)
    for part in np.array_split(entries, 7):  # in stretches, as a merge builds it
        bucketruns.add_to_filter(numpy_built, part, compiled=False)
    assert np.array_equal(built, numpy_built)

    # The same run written by both, from a run and entries in memory, some dead, capped.
    first = Run.write(str(tmp_path / "first.bin"), [entries[::2]], np.empty(0, np.uint32), 0, 1000)
    ids = (entries & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    dead, floor = np.sort(ids[::5]), int(np.sort(ids)[100])
    second = np.sort(np.concatenate((entries[1::2], (entries[:50] >> np.uint64(32) << np.uint64(32)) + np.uint64(7))))
    written = {}
    for compiled in (True, False):
        path = str(tmp_path / f"run-{compiled}.bin")
        run = Run.write(path, [first, second], dead, floor, 1, compiled=compiled)
        written[compiled] = Path(path).read_bytes()
    assert written[True] == written[False]
    expected, dead_ids = {}, set(dead.tolist())
    for entry in sorted(int(e) for e in np.concatenate((entries[::2], second))):
        doc_id = entry & 0xFFFFFFFF
        if doc_id >= floor and doc_id not in dead_ids:
            expected.setdefault(entry >> 32, entry)  # a bucket's oldest live member only (cap 1)
    assert run.read_pages(0, run.pages).tolist() == sorted(expected.values())
    first.close()
    table = BucketIndex()
    buckets = [b"b%d" % n for n in range(300)]
    for n, bucket in enumerate(buckets):
        table.add([bucket], 10**6 + n)
    index = TieredIndex(str(tmp_path), compiled=True)
    index.runs, index.table = [run], table
    python = TieredIndex(str(tmp_path), compiled=False)
    python.runs, python.table = [run], table
    assert index.members_each(buckets, 3) == python.members_each(buckets, 3)
    run.close()


def test_a_bucket_spread_over_pages_is_read_whole_and_oldest_first(tmp_path):
    index = TieredIndex.create(str(tmp_path / "index"), flush_entries=300)
    index.start(floor=1)
    for doc_id in range(1, 2001):
        index.add([b"h-common", b"s%d" % doc_id], doc_id)
    index.flush()
    members = index.members_each([b"h-common"], 5000)[0]
    assert members == list(range(1, 1001))  # capped at the oldest 1,000, as a table caps a bucket
    assert index.members_each([b"h-common", b"s1999"], 3) == [[1, 2, 3], [1999]]
    index.close()


def test_a_damaged_run_page_is_an_error_and_a_damaged_run_is_refused_at_open(tmp_path):
    folder = tmp_path / "index"
    index = TieredIndex.create(str(folder), flush_entries=100)
    index.start(floor=1)
    for doc_id in range(1, 2001):
        index.add([b"s%d" % doc_id], doc_id)
    index.merge_all()
    index.close()
    (name,) = [n for n in os.listdir(folder) if n.startswith("run-")]
    good = (folder / name).read_bytes()
    run = Run.open(str(folder / name))
    second = int(run.starts[1])  # page 1's head (first key, lowest id, widths), then its fields
    kept = int(run.starts[-1]) + 16 * run.pages + 8  # where page 1 starts, kept after the pages
    run.close()
    for at in (100, second, second + 8, second + 9, second + 40):  # a bit flipped in a page
        data = bytearray(good)
        data[at] ^= 0x10
        (folder / name).write_bytes(bytes(data))
        for compiled in PATHS:
            damaged = TieredIndex.open(str(folder), compiled=compiled)
            with pytest.raises(OSError, match="checksum"):
                damaged.members_each([b"s%d" % n for n in range(1, 2001)], 5)
            with pytest.raises(OSError, match="checksum"):  # merged: the same
                Run.write(str(tmp_path / "merged.bin"), damaged.runs, np.empty(0, np.uint32), 0, 10, compiled=compiled)
            damaged._close_runs()
    data = bytearray(good)
    data[kept] ^= 1  # kept in memory: the run's checksum covers it
    (folder / name).write_bytes(bytes(data))
    with pytest.raises(RunDamaged):
        Run.open(str(folder / name))
    (folder / name).write_bytes(good[:-1])  # cut short
    with pytest.raises(IndexDamaged):
        TieredIndex.open(str(folder))
    with pytest.raises(RunDamaged):
        Run.open(str(folder / name))


def test_closing_during_a_merge_gives_it_up_and_keeps_every_entry(tmp_path):
    folder = str(tmp_path / "index")
    index = TieredIndex.create(folder, flush_entries=50_000)
    index.start(floor=1)
    docs = documents(40_000, seed=4)
    for doc_id, buckets in docs:
        index.add(buckets, doc_id)
    index.flush()
    index._merge_everything = True  # a merge of every run, begun as the store closes
    index._wake_worker()
    index.close()
    assert not [name for name in os.listdir(folder) if name.endswith(".partial")]
    again = TieredIndex.open(folder)
    again.start(floor=1)
    model = Model()
    for doc_id, buckets in docs:
        model.add(buckets, doc_id)
    check_all(again, model, docs, random.Random(2))
    again.close()


@pytest.mark.parametrize("compiled", PATHS)
def test_runs_with_the_smaller_filter_of_earlier_versions_are_read_beside_new_ones(tmp_path, monkeypatch, compiled):
    """Runs written with 10 filter bits a key (before) and with 16 (now) in one index: the same
    members as the dict, reopened, and merged into one run with the new filter."""
    folder = str(tmp_path / "index")
    model, docs = Model(), documents(2400, seed=5)
    monkeypatch.setattr(tieredindex, "MERGE_RATIO", 0)  # runs stay apart until merge_all
    monkeypatch.setattr(bucketruns, "BLOOM_BITS", 10)
    index = TieredIndex.create(folder, flush_entries=1000, compiled=compiled)
    index.start(floor=1)
    add_all(index, model, docs[:1200])
    index.close()
    monkeypatch.setattr(bucketruns, "BLOOM_BITS", 16)
    again = TieredIndex.open(folder, compiled=compiled)
    again.start(floor=1)
    add_all(again, model, docs[1200:])
    again.flush()
    sizes = {len(run.bloom) * 8 // run.count for run in again.runs}
    assert min(sizes) < 13 <= max(sizes)  # both kinds of run are there
    check_all(again, model, docs, random.Random(3))
    again.close()
    merged = TieredIndex.open(folder, compiled=compiled)
    merged.start(floor=1)
    merged.merge_all()
    assert len(merged.runs) == 1 and len(merged.runs[0].bloom) == 64 * bucketruns.filter_blocks(merged.runs[0].count)
    check_all(merged, model, docs, random.Random(4))
    merged.close()


def test_the_filter_lets_few_absent_buckets_through(tmp_path):
    """An absent bucket the filter lets through costs a page read: at 16 bits a key, under
    0.4% of them (about 1% at the 10 bits of earlier versions)."""
    rng = np.random.default_rng(8)
    keys = np.unique(rng.integers(0, 1 << 32, 60_000, dtype=np.uint64))
    entries = (keys << np.uint64(32)) | np.uint64(1)
    absent = np.setdiff1d(rng.integers(0, 1 << 32, 200_000, dtype=np.uint64), keys)
    run = Run.write(str(tmp_path / "run.bin"), [entries], np.empty(0, np.uint32), 0, 1000)
    assert run is not None and run.may_hold(keys).all()
    assert run.may_hold(absent).mean() < 0.004
    run.close()


@pytest.mark.parametrize("compiled", PATHS)
def test_a_large_run_takes_the_smaller_filter_and_still_finds_every_member(tmp_path, monkeypatch, compiled):
    """Runs of LARGE_RUN_KEYS entries or more are written with 8 filter bits an entry, smaller
    ones with 16: four runs of about 3,000 entries merged into one of about 12,000 take half
    the filter bytes an entry, and lookups find what the dict holds."""
    folder = str(tmp_path / "index")
    model, docs = Model(), documents(2400, seed=6)
    monkeypatch.setattr(tieredindex, "MERGE_RATIO", 0)  # runs stay apart until merge_all
    monkeypatch.setattr(bucketruns, "LARGE_RUN_KEYS", 6000)
    index = TieredIndex.create(folder, flush_entries=1 << 20, compiled=compiled)
    index.start(floor=1)
    for part in range(4):
        add_all(index, model, docs[600 * part : 600 * (part + 1)])
        index.flush()
    assert len(index.runs) == 4
    assert all(run.count < 6000 and 15.5 < len(run.bloom) * 8 / run.count < 17 for run in index.runs)
    index.merge_all()
    (merged,) = index.runs
    assert merged.count >= 6000 and 7.5 < len(merged.bloom) * 8 / merged.count < 9
    check_all(index, model, docs, random.Random(5))
    index.close()


@pytest.mark.skipif(kernel is None, reason="the C kernel is not built")
def test_the_kernel_refuses_a_bucket_that_is_not_bytes_among_many_over_runs_and_table(tmp_path):
    """The kernel hashes every bucket first (to ask for their filter blocks together): a bad
    one among them is an error, and the same lookup without it answers as numpy does."""
    index = TieredIndex.create(str(tmp_path / "index"), flush_entries=200)
    index.start(floor=1)
    buckets = [b"b%d" % n for n in range(120)]
    for doc_id in range(1, 400):
        index.add(buckets[doc_id % 120 : doc_id % 120 + 3], doc_id)
        if doc_id == 300:
            index.flush()
    assert index.runs and index.table.entries
    with pytest.raises(TypeError):
        index.members_each([*buckets[:50], "b1", *buckets[50:]], 4)
    python = TieredIndex(index.folder, compiled=False)
    index.wait()  # no table half written as a run
    python.runs, python.table, python.floor = index.runs, index.table, index.floor
    assert index.members_each(buckets, 4) == python.members_each(buckets, 4)
    index.close()
