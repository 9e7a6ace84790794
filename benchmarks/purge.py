"""Purging an old window from a large LevelDB store: its time, the store's size before and after,
and the rate of a check stream that runs while the purge does.

On a store filled by ``speed.py --keep`` (its records carry the times they were stored at, so
the oldest ones are an old window), in one process:

a check stream (``Detector.check`` of new synthetic news-length texts, ``corpus.FillerTexts``,
numbers no fill reaches) runs throughout, while the oldest ``--fraction`` of the documents is
purged in ``--rounds`` pieces, each in a thread of its own as the pipeline does with
``NEARDUP_TTL`` (``Store.purge(older_than, background=True)``, paced). After each piece the
stream runs alone for as long as the piece took, so that its rate beside the purge and alone
are measured in turns, under the same load of the machine's other jobs. ``--batches 10000,2000``
gives the purge's turns write batches of those sizes in turn (the store's ``PURGE_BATCH``), to
compare them in one run. Printed: each turn,
the purge's time and its thread's CPU, the CPU of the process's other threads (the bucket
index's, LevelDB's compaction), and the stream's rate beside the purge over its rate alone.

Then, with ``--cli-fraction``, ``neardup purge`` removes the next window in a process of its own
(nothing else running: no pacing), timed. The store's bytes on disk (LevelDB's files and the
bucket index) are printed before and after each purge, and the memory the process holds.

    python benchmarks/purge.py --store /tmp/neardup-speed-rjieba-1234 --fraction 0.3 --cli-fraction 0.3

The store loses those documents: run it on a copy of a store you want to keep.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from speed import disk_bytes, rss_bytes

OFFSET = 700_000_000  # filler numbers of the check stream: past any fill


def sizes(path: str) -> str:
    index = sum(disk_bytes(folder) for folder in glob.glob(os.path.join(path, "neardup-index-*")))
    total = disk_bytes(path)
    return f"{total / 1e9:.2f} GB on disk ({(total - index) / 1e9:.2f} GB LevelDB, {index / 1e9:.2f} GB bucket index)"


class Stream:
    """Checks new texts one after another; counts them by phase (``until`` asked before each)."""

    def __init__(self, detector, texts: corpus.FillerTexts, start: int):
        self.detector, self.texts, self.number = detector, texts, start
        self.made, self.ready = start, []  # texts made up to this number, the last 50 of them

    def run(self, until) -> tuple[int, float, float]:
        """Check until ``until()`` is true; (documents, wall seconds, CPU seconds of this thread)."""
        done, wall, cpu = 0, time.perf_counter(), time.thread_time()
        while not until():
            if self.number >= self.made:  # texts made 50 at a time, untimed
                pause = time.perf_counter(), time.thread_time()
                self.ready = self.texts.chunk(self.number, self.number + 50)
                self.made = self.number + 50
                wall += time.perf_counter() - pause[0]
                cpu += time.thread_time() - pause[1]
            self.detector.check(f"stream-{self.number}", self.ready[self.number - self.made + 50])
            self.number += 1
            done += 1
        return done, time.perf_counter() - wall, time.thread_time() - cpu


def time_of_fraction(store, fraction: float) -> tuple[float, int]:
    """The time before which the oldest ``fraction`` of the documents were stored, and how many."""
    count = store.count()
    wanted = int(count * fraction)
    for number, record in enumerate(store.records()):
        if number == wanted:
            return record.time, wanted
    return float("inf"), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--store", required=True, help="the LevelDB store's folder (filled by speed.py --keep)")
    parser.add_argument("--fraction", type=float, default=0.3, help="share of the documents purged beside the stream")
    parser.add_argument("--cli-fraction", type=float, default=0.0, help="share purged next by `neardup purge`")
    parser.add_argument(
        "--seconds", type=float, default=60, help="the stream alone before the first turn (split by turns)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="turns: pieces the old window is purged in (default 2)")
    parser.add_argument(
        "--batches",
        default="10000",
        help="documents a purge batch, in turns (the store's PURGE_BATCH): 10000,2000 compares two in one run",
    )
    args = parser.parse_args()

    from scrapy_neardup import Detector, open_store
    from scrapy_neardup.stores.leveldb import store as leveldb_store

    articles = corpus.load_articles(args.data)
    texts = corpus.FillerTexts(corpus.sentence_pool(articles[len(articles) // 2 :]))
    print(f"before: {sizes(args.store)}", flush=True)
    start = time.perf_counter()
    store = open_store(f"leveldb://{args.store}")
    print(f"opened in {time.perf_counter() - start:.2f} s: {store.count():,} documents", flush=True)
    detector = Detector(store)
    stream = Stream(detector, texts, OFFSET + int(time.time()) % 10**6 * 1000)
    warmed = stream.number + 200
    stream.run(lambda: stream.number >= warmed)  # tables loaded, caches warm
    rss = rss_bytes()

    def rate(phase: str, figures: tuple[int, float, float]) -> float:
        done, wall, cpu = figures
        print(
            f"{phase}: {done:,} documents in {wall:.1f} s: {done / wall:,.0f} docs/s "
            f"({done / cpu:,.0f}/CPU-s), load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        return done / wall

    # Windows of the stream alone and beside a piece of the purge, in turns, each alone window
    # as long as the purge window before it: the load other jobs put on the machine drifts
    # over minutes, and turns of a few seconds compare the two under the same load.
    pieces = [time_of_fraction(store, args.fraction * (n + 1) / args.rounds)[0] for n in range(args.rounds)]
    deadline = time.perf_counter() + args.seconds / args.rounds
    stream.run(lambda: time.perf_counter() > deadline)  # the first alone window: the stream settles
    batches = [int(size) for size in args.batches.split(",")]
    figures = {size: {"alone": [0, 0.0, 0.0], "beside": [0, 0.0, 0.0], "purge": [0, 0.0, 0.0, 0.0]} for size in batches}
    for number, cutoff in enumerate(pieces, 1):
        size = batches[(number - 1) % len(batches)]
        leveldb_store.PURGE_BATCH = size
        result: list[float] = []

        def purge(cutoff: float = cutoff, result: list[float] = result) -> None:
            began, cpu = time.perf_counter(), time.thread_time()
            result.append(store.purge(cutoff, background=True))  # as Detector.purge(background=True)
            result.extend([time.perf_counter() - began, time.thread_time() - cpu])

        process_cpu = time.process_time()
        thread = threading.Thread(target=purge)
        thread.start()
        during = stream.run(lambda thread=thread: not thread.is_alive())
        thread.join()
        result.append(time.process_time() - process_cpu - during[2] - result[2])  # the other threads'
        deadline = time.perf_counter() + during[1]
        after = stream.run(lambda deadline=deadline: time.perf_counter() > deadline)
        print(
            f"turn {number}, batches of {size:,}: {int(result[0]):,} documents purged in {result[1]:.1f} s; the "
            f"stream {during[0] / during[1]:,.0f} docs/s beside it, {after[0] / after[1]:,.0f} alone after; load "
            f"{os.getloadavg()[0]:.1f}",
            flush=True,
        )
        mine = figures[size]
        for name, values in (("beside", during), ("alone", after), ("purge", result)):
            mine[name] = [a + b for a, b in zip(mine[name], values)]
    for size, mine in figures.items():
        (removed, seconds, purge_cpu, others), beside, alone = mine["purge"], mine["beside"], mine["alone"]
        rate(f"batches of {size:,}: stream alone", tuple(alone))  # type: ignore[arg-type]
        rate(f"batches of {size:,}: stream beside the purge", tuple(beside))  # type: ignore[arg-type]
        print(
            f"batches of {size:,}: purge beside the stream: {removed:,.0f} documents in {seconds:.1f} s, its "
            f"thread's CPU {purge_cpu:.1f} s ({purge_cpu / seconds:.1%} of its time), the process's other "
            f"threads' (index, LevelDB) {others:.1f} s; the stream kept "
            f"{beside[0] / beside[1] / (alone[0] / alone[1]):.2f} of its rate alone",
            flush=True,
        )
    store._index.wait()
    print(f"RSS grew {(rss_bytes() - rss) / 1e6:,.0f} MB over the run; {store.count():,} documents left")
    cli_cutoff = time_of_fraction(store, args.cli_fraction)[0] if args.cli_fraction else None
    store.close()
    print(f"after: {sizes(args.store)}", flush=True)

    if cli_cutoff is not None:
        began = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "scrapy_neardup",
                "purge",
                "--store",
                f"leveldb://{args.store}",
                "--older-than",
                str(time.time() - cli_cutoff),
            ],
            capture_output=True,
            text=True,
        )
        print(
            f"neardup purge: {done.stderr.strip()} in {time.perf_counter() - began:.1f} s "
            f"(exit {done.returncode}); after: {sizes(args.store)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
