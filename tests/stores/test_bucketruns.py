"""Run files of the bucket index with packed pages: every entry read back by the C kernel and
by numpy, widths at their edges, and runs of the raw layout of earlier versions read and
merged beside packed ones (test_tieredindex.py damages them)."""

import os
import random
import struct
from pathlib import Path

import numpy as np
import pytest
import xxhash
from test_tieredindex import Model, add_all, check_all, documents

from scrapy_neardup.fingerprints.kernel import kernel
from scrapy_neardup.stores.leveldb import bucketruns, tieredindex
from scrapy_neardup.stores.leveldb.bucketruns import PAGE, Run
from scrapy_neardup.stores.leveldb.tieredindex import TieredIndex

PATHS = [True, False] if kernel is not None else [False]
NO_DEAD = np.empty(0, dtype=np.uint32)
ALL = 1 << 40  # a cap no bucket reaches


def entries_of(keys, ids) -> np.ndarray:
    keys, ids = np.asarray(keys, dtype=np.uint64), np.asarray(ids, dtype=np.uint64)
    return np.unique((keys << np.uint64(32)) | ids)


def write_raw_run(path: Path, entries: np.ndarray) -> None:
    """A run as versions before packed pages wrote it: pages of 4 KB of raw little-endian
    entries (the last padded with zeros), fences, checksums of the entries, filter, footer."""
    pages = -(-len(entries) // PAGE)
    data = entries.astype("<u8").tobytes()
    sums = [xxhash.xxh64_intdigest(data[at : at + 8 * PAGE]) for at in range(0, len(data), 8 * PAGE)]
    bloom = np.zeros(64 * bucketruns.filter_blocks(len(entries)), dtype=np.uint8)
    bucketruns.add_to_filter(bloom, entries, compiled=False)
    meta = entries[::PAGE].astype("<u8").tobytes() + np.array(sums, dtype="<u8").tobytes() + bloom.tobytes()
    ids = entries & np.uint64(0xFFFFFFFF)
    footer = struct.pack(
        "<8sQQQQQQ",
        b"NDRUN\x00\x00\x01",
        len(entries),
        pages,
        len(bloom) // 64,
        int(ids.min()),
        int(ids.max()),
        xxhash.xxh64_intdigest(meta),
    )
    path.write_bytes(data + bytes(8 * (pages * PAGE - len(entries))) + meta + footer)


def written_alike(tmp_path: Path, sources, name: str) -> Run:
    """``sources`` written as one run by the kernel and by numpy: the same bytes; the run."""
    files = {}
    for compiled in PATHS:
        path = tmp_path / f"{name}-{compiled}.bin"
        run = Run.write(str(path), sources, NO_DEAD, 0, ALL, compiled=compiled)
        assert run is not None and run.packed
        files[compiled] = path.read_bytes()
        if compiled != PATHS[-1]:
            run.close()
    assert len(set(files.values())) == 1
    return run


def read_back(tmp_path: Path, run: Run, name: str) -> list[np.ndarray]:
    """Every entry of ``run`` as numpy reads its pages, and as each path reads it to merge it."""
    got = [run.read_pages(0, run.pages)]
    for compiled in PATHS:
        copy = Run.write(str(tmp_path / f"{name}-copy-{compiled}.bin"), [run], NO_DEAD, 0, ALL, compiled=compiled)
        got.append(copy.read_pages(0, copy.pages))
        copy.close()
    return got


def test_a_packed_run_reads_back_every_entry_and_takes_about_half_the_bytes(tmp_path):
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 1 << 32, 300_000, dtype=np.uint64)
    entries = entries_of(keys, rng.integers(1, 20_001, len(keys), dtype=np.uint64))
    run = written_alike(tmp_path, [entries], "run")
    for got in read_back(tmp_path, run, "run"):
        assert np.array_equal(got, entries)
    pages = int(run.starts[-1])
    assert pages < 0.55 * 8 * len(entries)  # keys' gaps of about 17 bits, ids of 15
    run.close()


@pytest.mark.parametrize(
    "entries",
    [
        entries_of([123456], [42]),  # one entry: no bits at all after the head
        entries_of([99] * 700, range(1, 701)),  # one key over two pages: gaps of no bits
        entries_of([5, 5, 6], [0, 0xFFFFFFFF, 1]),  # ids spanning 2**32 - 1
        entries_of([0, 0xFFFFFFFF], [7, 7]),  # keys 0 and 2**32 - 1: a gap of 32 bits
        entries_of([0, 0xFFFFFFFF, 0xFFFFFFFF], [0xFFFFFFFF, 0, 0xFFFFFFFF]),  # fields of 64 bits
        entries_of(np.arange(PAGE + 1) * 8_000_000, np.arange(PAGE + 1) * 8_000_000),  # a page and one
    ],
    ids=["one-entry", "one-key", "id-span", "key-span", "both-spans", "page-and-one"],
)
def test_widths_at_their_edges_read_back(tmp_path, entries):
    assert np.array_equal(
        bucketruns.unpack_page(bucketruns.pack_page(entries[:PAGE]), len(entries[:PAGE])), entries[:PAGE]
    )
    run = written_alike(tmp_path, [entries], "edge")
    for got in read_back(tmp_path, run, "edge"):
        assert np.array_equal(got, entries)
    run.close()


@pytest.mark.parametrize("compiled", PATHS)
def test_runs_of_raw_pages_are_read_and_merged_beside_packed_ones(tmp_path, monkeypatch, compiled):
    """An index whose runs were written before pages were packed (rewritten here in that
    layout) answers as the dict does, beside a new packed run, and its next merge writes
    one packed run of them all."""
    folder = str(tmp_path / "index")
    model, docs = Model(), documents(3000, seed=8)
    monkeypatch.setattr(tieredindex, "MERGE_RATIO", 0)  # runs stay apart until merge_all
    index = TieredIndex.create(folder, flush_entries=1500, compiled=compiled)
    index.start(floor=1)
    add_all(index, model, docs[:2000])
    index.close()
    names = [n for n in os.listdir(folder) if n.startswith("run-")]
    assert names
    for name in names:
        run = Run.open(os.path.join(folder, name))
        entries = run.read_pages(0, run.pages)
        run.close()
        write_raw_run(Path(folder) / name, entries)
    again = TieredIndex.open(folder, compiled=compiled)
    assert again.runs and not any(run.packed for run in again.runs)
    again.start(floor=1)
    check_all(again, model, docs[:2000], random.Random(5))
    add_all(again, model, docs[2000:])
    again.flush()
    assert {run.packed for run in again.runs} == {True, False}
    check_all(again, model, docs, random.Random(6))
    again.merge_all()
    assert len(again.runs) == 1 and again.runs[0].packed
    check_all(again, model, docs, random.Random(7))
    again.close()
