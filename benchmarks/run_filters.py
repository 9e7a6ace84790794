"""Key reads of a filled LevelDB store with its bucket runs' filters as written and rebuilt at
another size, in turns on the same lookups.

A lookup asks every run of the bucket index for each of its buckets; a run's Bloom filter
answers for the buckets it does not hold, and each absent bucket the filter lets through costs
a page read and its checksum for nothing. On a store ``speed.py --keep`` (or ``store_ab.py``)
filled, this copies each run with the filter this tree writes for it (``bucketruns.filter_blocks``,
to ``--workdir``), counts the absent buckets each set of runs lets through a lookup, and times the C kernel's
reads of the same lookups (the streams of ``lookup_cost.py``) through one set and the other in
turns. Run it on a copy of the store: opened by this tree, the index may merge runs (with the
new filter) before anything is measured.

    python benchmarks/run_filters.py --store COPY --count 400 --rounds 6
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import corpus
import numpy as np
from lookup_cost import streams

from scrapy_neardup import Detector, Recipe, open_store
from scrapy_neardup.fingerprints.kernel import kernel
from scrapy_neardup.stores.base import key_buckets, sentence_bucket
from scrapy_neardup.stores.leveldb.bucketindex import BUCKET_CAP
from scrapy_neardup.stores.leveldb.bucketruns import Run, bucket_keys

NO_DEAD = np.empty(0, dtype=np.uint32)


def lookups(detector: Detector, args: argparse.Namespace) -> list[tuple[list[bytes], list[bytes]]]:
    """Each document's two reads as a check makes them: its sentence buckets, then its SimHash
    buckets and own key."""
    out = []
    for name in args.streams.split(","):
        for key, text in zip(*streams(args)[name]):
            _, probe, _ = detector._ask(key, detector.fingerprint(text), False, "")
            out.append(([sentence_bucket(k) for k in probe.sentence_keys], probe.simhash_buckets + key_buckets(key)))
    return out


def passed_for_nothing(runs: list[Run], reads: list[tuple[list[bytes], list[bytes]]]) -> float:
    """Absent buckets a lookup that the runs' filters let through."""
    passed = 0
    for sentences, others in reads:
        keys = bucket_keys(sentences + others)
        for run in runs:
            for key, may_hold in zip(keys, run.may_hold(keys)):
                passed += bool(may_hold) and not run.members(int(key), 1, NO_DEAD, 0)
    return passed / len(reads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--store", required=True, type=Path, help="a copy of a LevelDB folder speed.py --keep left")
    parser.add_argument("--count", type=int, default=400, help="documents of each stream")
    parser.add_argument("--filler-start", type=int, default=50_000_000, help="first filler index (past the fill)")
    parser.add_argument("--streams", default="fillers,news")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()), help="where the copies go")
    args = parser.parse_args()
    if kernel is None:
        parser.error("the C kernel is not built: it is what is timed")
    store = open_store(f"leveldb://{args.store}", recipe=Recipe(tokenizer="rjieba"), create=False)
    index = store._index
    index.wait()
    reads = lookups(Detector(store), args)
    folder = Path(tempfile.mkdtemp(prefix="neardup-run-filters-", dir=args.workdir))
    try:
        written = list(index.runs)
        rebuilt = [Run.write(str(folder / run.name), [run], NO_DEAD, 0, BUCKET_CAP) for run in written]
        sets = {"as written": written, "this tree's filters": [run for run in rebuilt if run is not None]}
        print(f"run_filters.py: {args.store}, {store.count():,} stored, {len(written)} runs, {len(reads)} lookups")
        for name, runs in sets.items():
            bits = ", ".join(f"{8 * len(run.bloom) / run.count:.1f}" for run in runs)
            megabytes = sum(run.bloom.nbytes for run in runs) / 1e6
            print(
                f"  {name}: filter bits a key {bits} ({megabytes:.1f} MB); absent buckets let through a lookup "
                f"{passed_for_nothing(runs, reads):.3f}"
            )
        tables = [index.table.table]
        times: dict[str, list[float]] = {name: [] for name in sets}
        for _ in range(args.rounds):
            for name, runs in sets.items():
                specs = [run.spec() for run in runs]
                start = time.thread_time()
                for sentences, others in reads:
                    kernel.runs_find(specs, tables, sentences, 5, NO_DEAD, index.floor)
                    kernel.runs_find(specs, tables, others, 200, NO_DEAD, index.floor)
                times[name].append((time.thread_time() - start) / len(reads) * 1e6)
        for name, values in times.items():
            rounds = " ".join(f"{value:.1f}" for value in values)
            print(f"  {name}: key reads µs a lookup (CPU), rounds {rounds}; median {statistics.median(values):.1f}")
        first, second = (statistics.median(values) for values in times.values())
        print(f"  ratio of the medians {second / first:.2f}; load {os.getloadavg()[0]:.1f}")
        for run in rebuilt:
            if run is not None:
                run.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        store.close()


if __name__ == "__main__":
    main()
