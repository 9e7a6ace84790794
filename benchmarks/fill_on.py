"""Go on filling a store that ``speed.py --keep`` left, million by million, as ``speed.py --step`` reports.

``speed.py`` fills a new store from nothing in one process; a fill to 10 million takes hours
on two cores, and a session may end first. This script opens a kept store and checks more
fillers (``corpus.FillerTexts``, from ``--first-filler`` on, past the fill that made the
store) through ``Detector.check``, as the fill does, and prints for every step: documents a
CPU-second of this thread (what speed.py prints) and of the whole process (LevelDB's compaction
and the bucket index's writer included), candidates a lookup, the process's RSS growth a
stored document over the step (anonymous and file-backed), and bytes on disk a document.
With ``--batch``, once the store holds ``--upto``, the batch of real news and their reprints that
speed.py measures at each size is checked as it does there (best of its passes, each undone), and
again split into fingerprint and check: speed.py's figures "at 10M" for a store it did not fill.
``--merge-index`` then merges the bucket index into one run (what compaction does to it) and
prints its bytes a document: runs written by an earlier layout are written again in this one.

    python benchmarks/fill_on.py --store /tmp/neardup-speed-rjieba-PID --upto 10000000 --batch
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from speed import BLOCK, PASSES, EngineSubject, disk_bytes, load, make_batch, rss_bytes, rss_parts, score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, type=Path, help="the LevelDB folder speed.py --keep left")
    parser.add_argument("--upto", type=int, default=10_000_000, help="stop once the store holds this many")
    parser.add_argument("--step", type=int, default=1_000_000, help="report every STEP stored")
    parser.add_argument(
        "--first-filler",
        type=int,
        default=100_000_000,
        help="first filler number: past the fill; for a later run, the next one the last run printed",
    )
    parser.add_argument("--tokenizer", default="rjieba")
    parser.add_argument("--batch", action="store_true", help="then measure speed.py's batch on the store")
    parser.add_argument(
        "--merge-index",
        action="store_true",
        help="then merge the bucket index into one run, timed, and print its bytes",
    )
    corpus.add_data_option(parser)
    args = parser.parse_args()

    articles = corpus.load_articles(args.data)
    fillers = corpus.FillerTexts(corpus.sentence_pool(articles[len(articles) // 2 :]))
    started = time.perf_counter()
    subject = EngineSubject(args.tokenizer, "", path=str(args.store))
    print(f"opened {args.store} in {time.perf_counter() - started:.2f} s", flush=True)
    subject.warm_up(fillers.chunk(10**9, 10**9 + 200))  # loads the dictionaries, untimed
    store = subject.store
    stored = store.count()
    number = args.first_filler
    print(f"{stored:,} stored; filling to {args.upto:,} from filler {number:,}; load {load()}", flush=True)
    print_memory(store, stored)
    while stored < args.upto:
        step_end = min(args.upto, (stored // args.step + 1) * args.step)
        rss, parts = rss_bytes(), rss_parts()
        thread_cpu = process_cpu = wall = 0.0
        checked = duplicates = 0
        step_start = stored
        subject.candidates.clear()
        while stored < step_end:
            take = min(BLOCK, step_end - stored)
            clock, judged = subject.fill(
                [f"filler-{i}" for i in range(number, number + take)], fillers.chunk(number, number + take)
            )
            number += take
            stored += take - judged
            duplicates += judged
            wall, thread_cpu, process_cpu = wall + clock.wall, thread_cpu + clock.cpu, process_cpu + clock.process_cpu
            checked += take
        grown = max(1, stored - step_start)
        now_rss = rss_bytes()  # trims the heap first: the parts read after it are the same pages
        now = rss_parts()
        candidates = subject.candidates
        print(
            f"fill {step_start:,} -> {stored:,}: {checked / thread_cpu:,.0f} docs/CPU-s "
            f"(process {checked / process_cpu:,.0f}, {checked / wall:,.0f} docs/s), "
            f"{sum(candidates) / max(1, len(candidates)):.2f} candidates/lookup, {duplicates} judged duplicate, "
            f"RSS {(now_rss - rss) / grown:+,.0f} B/doc (anon {(now.get('anon', 0) - parts.get('anon', 0)) / grown:+,.0f}, "
            f"file {(now.get('file', 0) - parts.get('file', 0)) / grown:+,.0f}), "
            f"RSS {now_rss / 2**30:.2f} GiB, disk {disk_bytes(str(args.store)) / stored:,.0f} B/doc, load {load()}",
            flush=True,
        )
    print_memory(store, stored)
    if args.batch:
        measure_batch(subject, corpus.news_length_docs(articles[: len(articles) // 2]), stored)
    if args.merge_index:
        started = time.perf_counter()
        store._index.merge_all()
        print(
            f"bucket index merged into one run in {time.perf_counter() - started:.0f} s: "
            f"{store._index.disk_bytes() / stored:,.1f} B/doc; the store {disk_bytes(str(args.store)) / stored:,.0f} B/doc",
            flush=True,
        )
    subject.close()
    print(f"done: {stored:,} stored, next filler {number:,}", flush=True)


def print_memory(store, stored: int) -> None:
    """What the process holds, a stored document: the whole RSS, and the store's own parts."""
    rss, parts = rss_bytes(), rss_parts()
    index = store._index.memory_bytes()
    simhashes = store._simhashes.memory_bytes
    print(
        f"memory at {stored:,}: RSS {rss / 2**30:.2f} GiB, {rss / max(1, stored):,.0f} B/doc "
        f"(anon {parts.get('anon', 0) / max(1, stored):,.0f}, file {parts.get('file', 0) / max(1, stored):,.0f}); "
        f"bucket index {index / max(1, stored):,.1f} B/doc, SimHashes {simhashes / max(1, stored):,.1f} B/doc",
        flush=True,
    )


def open_every_table(store) -> None:
    """Read one record of every LevelDB table, untimed. The process that filled the store (which
    speed.py measures in) has every table open; a process that just opened the store opens each
    (its file, index block and filter) on its first read, a cost of its first minutes, not of
    a check at this size. Records follow ids, so reading every 200th id meets them all."""
    started = time.perf_counter()
    get, prefix = store._get, store._doc_prefix
    for doc_id in range(1, store._last[0] + 1, 200):
        get(prefix + doc_id.to_bytes(8, "big"))
    print(f"one record of every table read in {time.perf_counter() - started:.1f} s (untimed)", flush=True)


def measure_batch(subject: EngineSubject, docs: list[str], stored: int) -> None:
    """speed.py's batch at this size, as it measures it: best of PASSES passes, each undone,
    then fingerprint and check apart; and the first pass's figure apart: the later passes read
    the records of the same candidates, which LevelDB's block cache and this process's mapping
    of its tables hold by then (a long crawl's new stories find some of theirs there)."""
    batch = make_batch(docs)
    open_every_table(subject.store)
    cpus, walls = [], []
    for tag in "abcde"[:PASSES]:
        clock, matched = subject.run_batch(batch, tag)
        cpus.append(clock.cpu)
        walls.append(clock.wall)
        subject.undo_batch()
    split = subject.run_split(batch)
    subject.undo_batch()
    n = len(batch.keys)
    scored = score(batch, matched)
    print(
        f"batch at {stored:,}: {n / min(cpus):,.0f} docs/CPU-s, {n / min(walls):,.0f} docs/s (best of {PASSES}; "
        f"the first {n / cpus[0]:,.0f} docs/CPU-s, LevelDB's block cache and mapped tables cold for its records); "
        f"CPU a document: fingerprint {split['fingerprint_cpu_us']:,.0f} µs + check {split['store_cpu_us']:,.0f} µs; "
        f"{scored['caught']}/{scored['reprints']} reprints caught, {scored['false_duplicates']} false duplicates; "
        f"load {load()}",
        flush=True,
    )


if __name__ == "__main__":
    main()
