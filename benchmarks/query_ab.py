"""query.py's queries with two source trees in turn, on one store filled once: their CPU a query.

The store is filled as ``query.py`` fills it (``--size`` fillers, then the first copy of every
second story of the reprint stream) and kept in ``--store``, so a second run skips the fill.
Then, ``--pairs`` times, a process with ``--base DIR``'s package (a source tree with its C
kernel built in place) and one with this tree's each query every later copy and every document
of a story never stored, in batches of 64, fingerprinting included. Each starts from a new
``Detector`` that has fingerprinted the stored first copies, as query.py's has checked them.

``--fingerprints`` times fingerprinting alone instead: every text of the stream once, in order,
by a new Fingerprinter, story words read (trees of any age: older ones have fewer parts).

Printed: each process's CPU microseconds a query (best of ``--rounds``), and for each pair this
tree's over the base's, then their median: on a loaded machine only such ratios of two trees
measured in turn mean anything. The store must not change.

    python benchmarks/query_ab.py --base /tmp/main-tree --store /tmp/query-ab-100k --size 100000
    python benchmarks/query_ab.py --base /tmp/main-tree --fingerprints --pairs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
import query
import reprints
from trees import check_base

BATCH = 64


def split_stream(data: Path, seed: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """query.py's split: (the first copies to store, the documents to query), as (key, text)."""
    docs = reprints.build_stream(data, seed)
    stored_stories = {doc.story for doc in docs if doc.story % 2 == 0}
    first: set[int] = set()
    stored, queried = [], []
    for doc in docs:
        if doc.story not in stored_stories or doc.story in first:
            queried.append((doc.key, doc.text))
        else:
            first.add(doc.story)
            stored.append((doc.key, doc.text))
    return stored, queried


def fill(folder: Path, size: int, data: Path, seed: int) -> None:
    from scrapy_neardup import Detector, Recipe, open_store

    store = open_store(f"leveldb://{folder}", recipe=Recipe(tokenizer="rjieba"))
    detector = Detector(store)
    query.fill(detector, size, data)
    for key, text in split_stream(data, seed)[0]:
        detector.check(key, text)
    print(f"filled {store.count():,} documents into {folder}", flush=True)
    store.close()


def measure(folder: Path, data: Path, seed: int, rounds: int) -> float:
    """CPU seconds a query with the package this process imports, best of ``rounds``."""
    from scrapy_neardup import Detector, Recipe, open_store

    stored, queried = split_stream(data, seed)
    store = open_store(f"leveldb://{folder}", recipe=Recipe(tokenizer="rjieba"))
    count = store.count()
    best = float("inf")
    for _ in range(rounds):
        detector = Detector(store)
        for _, text in stored:
            detector.fingerprint(text)
        cpu = time.process_time()
        for start in range(0, len(queried), BATCH):
            batch = queried[start : start + BATCH]
            prints = [detector.fingerprint(text) for _, text in batch]
            detector.query_many(prints, 10, keys=[key for key, _ in batch])
        best = min(best, (time.process_time() - cpu) / len(queried))
    assert store.count() == count, "a query changed the store"
    store.close()
    return best


def fingerprinting(data: Path, seed: int, rounds: int) -> float:
    """CPU seconds a fingerprint of the stream's texts, each once, in order, by a new
    Fingerprinter (nothing cut before), story words read as a stored record's are; best of
    ``rounds``. Trees older than story words have none to read."""
    from scrapy_neardup import Fingerprinter, Recipe

    texts = [doc.text for doc in reprints.build_stream(data, seed)]
    Fingerprinter(Recipe(tokenizer="rjieba")).fingerprint(texts[0])  # tables and tokenizer loaded
    best = float("inf")
    for _ in range(rounds):
        fingerprinter = Fingerprinter(Recipe(tokenizer="rjieba"))
        cpu = time.process_time()
        for text in texts:
            words = getattr(fingerprinter.fingerprint(text), "story_words", None)
            if words is not None:
                words.words  # noqa: B018 - made when first read
        best = min(best, (time.process_time() - cpu) / len(texts))
    return best


def child(tree: Path | None, args: argparse.Namespace) -> float:
    """One measuring process, importing the package of ``tree`` (None: this tree's)."""
    env = dict(os.environ)
    here = Path(__file__).resolve().parent
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (tree or here.parent, here))
    command = [sys.executable, __file__, "--child", "--store", str(args.store), "--data", str(args.data)]
    command += ["--seed", str(args.seed), "--rounds", str(args.rounds)]
    command += ["--fingerprints"] if args.fingerprints else []
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["seconds"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpus.add_data_option(parser)
    parser.add_argument("--base", type=Path, help="source tree to compare (C kernel built in place)")
    parser.add_argument("--store", type=Path, default=Path("query-ab-store"), help="LevelDB folder, filled when absent")
    parser.add_argument("--size", type=int, default=100_000, help="filler documents stored first")
    parser.add_argument("--seed", type=int, default=reprints.DEFAULT_SEED)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--fingerprints", action="store_true", help="time fingerprinting the stream only")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if problem := check_base(args.base):
        parser.error(problem)
    if args.child:
        if args.fingerprints:
            seconds = fingerprinting(args.data, args.seed, args.rounds)
        else:
            seconds = measure(args.store, args.data, args.seed, args.rounds)
        print(json.dumps({"seconds": seconds}))
        return 0
    if not args.store.exists() and not args.fingerprints:
        fill(args.store, args.size, args.data, args.seed)
    ratios = []
    what = "fingerprint" if args.fingerprints else "query"
    for pair in range(args.pairs):
        base = child(args.base, args) if args.base else None
        this = child(None, args)
        load = "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
        if base is None:
            print(f"pair {pair + 1}: this tree {1e6 * this:.1f} us ({1 / this:,.0f} per CPU s), {load}")
            continue
        ratios.append(this / base)
        print(
            f"pair {pair + 1}: base {1e6 * base:.1f} us, this tree {1e6 * this:.1f} us a {what} "
            f"({1 / base:,.0f} and {1 / this:,.0f} per CPU s): {ratios[-1]:.3f}, {load}",
            flush=True,
        )
    if ratios:
        print(
            f"this tree's CPU a {what} over the base's: median {statistics.median(ratios):.3f} of {len(ratios)} pairs"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
