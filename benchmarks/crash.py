"""A process killed while it fills a large LevelDB store: every document it had stored is found.

A child process opens the store and checks new synthetic news-length texts (``corpus.FillerTexts``,
from an offset no fill of ``speed.py`` reaches), appending each stored key to a log file as soon
as ``Detector.check`` returns (the store has written it then). The parent kills it with SIGKILL
once it has run ``--min-seconds`` and its bucket index is writing a run (a ``.partial`` file in
the index folder: a flush or a merge in the middle), or after ``--max-seconds`` whatever it is
doing. Then the parent opens the store again, timed, and asks it about every logged text
(``Detector.query``): each must come back as a duplicate of its own key.

    python benchmarks/crash.py --store /tmp/neardup-speed-rjieba-1234        # a store speed.py --keep left
    python benchmarks/crash.py --store /tmp/crash-store --fill 200000          # fill a new one first

Run it on a copy of a store you want to keep: the killed run adds documents to it.
"""

from __future__ import annotations

import argparse
import glob
import logging
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus

OFFSET = 500_000_000  # filler numbers of the killed runs: past any fill


def fillers(args: argparse.Namespace) -> corpus.FillerTexts:
    articles = corpus.load_articles(args.data)
    return corpus.FillerTexts(corpus.sentence_pool(articles[len(articles) // 2 :]))


def child(args: argparse.Namespace) -> None:
    """Check fillers into the store until killed, logging each stored key."""
    from scrapy_neardup import Detector, open_store

    texts = fillers(args)
    store = open_store(f"leveldb://{args.store}")
    detector = Detector(store)
    log = os.open(args.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    print("open", flush=True)
    number = args.start
    while True:
        for text in texts.chunk(number, number + 1000):
            key = f"crash-{number}"
            number += 1
            if detector.check(key, text).stored:
                os.write(log, f"{number - 1}\n".encode())


def fill(args: argparse.Namespace) -> None:
    from scrapy_neardup import Detector, open_store

    texts = fillers(args)
    with open_store(f"leveldb://{args.store}") as store:
        detector = Detector(store)
        for start in range(0, args.fill, 10_000):
            for number, text in enumerate(texts.chunk(start, min(args.fill, start + 10_000)), start):
                detector.check(f"filler-{number}", text)
            print(f"filled {min(args.fill, start + 10_000):,}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--store", required=True, help="the LevelDB store's folder")
    parser.add_argument("--fill", type=int, default=0, help="fill a new store with this many fillers first")
    parser.add_argument("--min-seconds", type=float, default=60, help="run at least this long before the kill")
    parser.add_argument("--max-seconds", type=float, default=600, help="kill by then whatever the index does")
    parser.add_argument("--seed", type=int, default=1, help="when to kill, within the bounds")
    parser.add_argument(
        "--start",
        type=int,
        help="the first filler number of the killed run "
        "(default: from the clock, so that runs on one store check new texts)",
    )
    parser.add_argument("--log", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.fill:
        fill(args)

    from scrapy_neardup import Detector, open_store

    args.start = args.start or OFFSET + int(time.time()) % 10**6 * 1000
    log = f"{args.store.rstrip('/')}.crash-log"
    with open(log, "w"):
        pass
    started = time.perf_counter()
    killed = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--child",
            "--store",
            args.store,
            "--log",
            log,
            "--data",
            str(args.data),
            "--start",
            str(args.start),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert killed.stdout.readline().strip() == "open"
    opened = time.perf_counter() - started
    rng = random.Random(args.seed)
    earliest = time.perf_counter() + args.min_seconds + rng.uniform(0, 10)
    deadline = time.perf_counter() + args.max_seconds
    writing = ""
    while time.perf_counter() < deadline:
        time.sleep(0.05)
        if time.perf_counter() < earliest:
            continue
        partial = glob.glob(os.path.join(args.store, "neardup-index-*", "*.partial"))
        if partial:
            writing = os.path.basename(partial[0])
            break
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    ran = time.perf_counter() - started
    numbers = [int(line) for line in Path(log).read_text().split()]

    logging.basicConfig(level=logging.INFO, format="  %(message)s")
    start = time.perf_counter()
    store = open_store(f"leveldb://{args.store}")
    reopened = time.perf_counter() - start
    detector = Detector(store)
    texts = fillers(args)
    missing = []
    for at in range(0, len(numbers), 1000):
        part = numbers[at : at + 1000]
        prints = [detector.fingerprint(texts.chunk(n, n + 1)[0]) for n in part]
        for n, found in zip(part, detector.query_many(prints)):
            if not any(s.duplicate and s.key == f"crash-{n}" for s in found):
                missing.append(n)
    stored = store.count()
    store.close()
    print(
        f"killed after {ran:.0f} s (open {opened:.1f} s) "
        + (f"while the index wrote {writing}" if writing else "(no run being written at the deadline)")
        + f"; it had stored {len(numbers):,} documents; reopened in {reopened:.2f} s; "
        f"{len(numbers) - len(missing):,} of them found, {len(missing)} missing"
        + (f" (first: {missing[:5]})" if missing else "")
        + f"; the store holds {stored:,} documents; load {os.getloadavg()[0]:.1f}"
    )
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
