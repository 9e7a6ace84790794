"""Purging an old window from a large LevelDB store: its time, the store's size before and after,
and the rate of a check stream that runs while the purge does.

On a store filled by ``speed.py --keep`` (its records carry the times they were stored at, so
the oldest ones are an old window), in one process:

1. ``--seconds`` of a check stream alone: ``Detector.check`` of new synthetic news-length
   texts (``corpus.FillerTexts``, numbers no fill reaches), its documents per second;
2. the oldest ``--fraction`` of the documents purged in a thread of its own, as the pipeline
   does with ``NEARDUP_TTL`` (``Store.purge(older_than, background=True)``), while the same
   stream goes on: the purge's time, and the stream's rate meanwhile;
3. ``--seconds`` of the stream alone again.

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
    """Checks new texts one after another; counts them by phase."""

    def __init__(self, detector, texts: corpus.FillerTexts, start: int):
        self.detector, self.texts, self.number = detector, texts, start

    def run(self, until) -> tuple[int, float, float]:
        """Check until ``until()`` is true; (documents, wall seconds, CPU seconds of this thread)."""
        done, wall, cpu = 0, time.perf_counter(), time.thread_time()
        while not until():
            for text in self.texts.chunk(self.number, self.number + 50):
                self.detector.check(f"stream-{self.number}", text)
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
    parser.add_argument("--seconds", type=float, default=120, help="length of the stream alone, before and after")
    args = parser.parse_args()

    from scrapy_neardup import Detector, open_store

    articles = corpus.load_articles(args.data)
    texts = corpus.FillerTexts(corpus.sentence_pool(articles[len(articles) // 2 :]))
    print(f"before: {sizes(args.store)}", flush=True)
    start = time.perf_counter()
    store = open_store(f"leveldb://{args.store}")
    print(f"opened in {time.perf_counter() - start:.2f} s: {store.count():,} documents", flush=True)
    cutoff, purging = time_of_fraction(store, args.fraction)
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

    deadline = time.perf_counter() + args.seconds
    before = rate("stream alone", stream.run(lambda: time.perf_counter() > deadline))
    result: list[float] = []

    def purge() -> None:
        began, cpu = time.perf_counter(), time.thread_time()
        result.append(store.purge(cutoff, background=True))  # as Detector.purge(background=True)
        result.extend([time.perf_counter() - began, time.thread_time() - cpu])

    process_cpu = time.process_time()
    thread = threading.Thread(target=purge)
    thread.start()
    figures = stream.run(lambda: not thread.is_alive())
    process_cpu = time.process_time() - process_cpu
    during = rate(f"stream while about {purging:,} documents are purged", figures)
    thread.join()
    removed, seconds, purge_cpu = result
    others = process_cpu - figures[2] - purge_cpu
    print(
        f"purge beside the stream: {removed:,.0f} documents in {seconds:.1f} s, its thread's CPU "
        f"{purge_cpu:.1f} s ({purge_cpu / seconds:.1%} of the time), the process's other threads' "
        f"(index, LevelDB) {others:.1f} s; the stream kept {during / before:.2f} of its rate",
        flush=True,
    )
    store._index.wait()
    deadline = time.perf_counter() + args.seconds
    after = rate("stream alone after", stream.run(lambda: time.perf_counter() > deadline))
    print(f"the stream beside the purge / alone before and after: {2 * during / (before + after):.2f}", flush=True)
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
