"""Checks of new documents by two source trees in turn, each on its own copy of one filled
LevelDB store: their CPU a check.

``store_ab.py`` has each tree fill a store of its own from empty, so its stores differ in what
their runs of the bucket index hold at each step and in when they merge; here both start from
copies of one store (``speed.py --keep`` or ``store_ab.py`` filled it). With ``--merge`` each
tree first merges its copy's bucket index into one run, so the runs carry that tree's layout
(their filters, say). One process of the base tree and one of this tree stay open on their
copies throughout: each checks ``--warm`` new fillers (``corpus.FillerTexts``, from
``--filler-start`` on) untimed, then, ``--pairs`` times, both check the same next ``--count``
fillers through ``Detector.check_fingerprint`` (with ``--reserve``, each new story reserved and
then committed, as a crawl's pipeline does), one after the other, the first of a pair
alternating; each step's fillers are fingerprinted before its clock starts (this thread's CPU;
a fingerprint's story words are computed when first read, by a stored one's write, unless
``--story-words-first`` reads them before the clock too).
A process that opens its copy afresh for each pair pays for opening LevelDB's tables again in
its timed checks, and a pair of short runs on a shared machine is taken at two loads: pairs
of long-lived processes in alternating order scatter less. Both copies grow alike. Printed:
each process's CPU microseconds a check, this tree's over the base's for each pair, their
median, and the mean of each.

    python benchmarks/check_ab.py --base /tmp/main-tree --store /tmp/neardup-speed-rjieba-PID --merge
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from trees import check_base


def serve(args: argparse.Namespace) -> None:
    """A child: open the copy (merging its index first with ``--merge``), then for each line
    ``START COUNT`` read on stdin check fillers START to START + COUNT, answering with the
    CPU a check of those (fingerprinted before the clock starts)."""
    from scrapy_neardup import Detector, Recipe, open_store

    store = open_store(f"leveldb://{args.copy}", recipe=Recipe(tokenizer="rjieba"), create=False)
    try:
        if args.merge:
            store._index.merge_all()
        articles = corpus.load_articles(args.data)
        fillers = corpus.FillerTexts(corpus.sentence_pool(articles[len(articles) // 2 :]))
        detector = Detector(store)
        print(json.dumps({"runs": len(store._index.runs)}), flush=True)
        for line in sys.stdin:
            first, count = map(int, line.split())
            fingerprints = [detector.fingerprint(text) for text in fillers.chunk(first, first + count)]
            for fingerprint in fingerprints if args.story_words_first else []:
                fingerprint.story_words.words, fingerprint.story_words.datelines  # noqa: B018 - computed when read
            start = time.thread_time()
            for number, fingerprint in enumerate(fingerprints, first):
                verdict = detector.check_fingerprint(f"check-ab-{number}", fingerprint, reserve=args.reserve)
                if args.reserve:
                    detector.commit(verdict)  # its item stored, as a crawl's pipeline does
            cpu = (time.thread_time() - start) / count
            print(
                json.dumps({"cpu_us": cpu * 1e6, "runs": len(store._index.runs), "load": os.getloadavg()[0]}),
                flush=True,
            )
    finally:
        store.close()


def start_child(tree: Path | None, copy: Path, args: argparse.Namespace) -> subprocess.Popen:
    """One process importing the package of ``tree`` (None: this tree's)."""
    env = dict(os.environ)
    here = Path(__file__).resolve().parent
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (tree or here.parent, here))
    command = [sys.executable, __file__, "--child", "--copy", str(copy), "--data", str(args.data)]
    command += ["--merge"] if args.merge else []
    command += ["--reserve"] if args.reserve else []
    command += ["--story-words-first"] if args.story_words_first else []
    return subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def ask(process: subprocess.Popen, first: int, count: int) -> dict:
    process.stdin.write(f"{first} {count}\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--base", type=Path, help="source tree to compare (C kernel built in place)")
    parser.add_argument("--store", type=Path, help="a filled LevelDB store, copied twice (left as it is)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()), help="where the copies go")
    parser.add_argument("--merge", action="store_true", help="each tree merges its copy's bucket index first")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--warm", type=int, default=2000, help="checks of each process before the timed ones")
    parser.add_argument("--count", type=int, default=2000, help="timed checks of each process in a pair")
    parser.add_argument("--filler-start", type=int, default=60_000_000, help="first filler index (past the fill)")
    parser.add_argument("--reserve", action="store_true", help="reserve each new story, then commit it (a crawl)")
    parser.add_argument(
        "--story-words-first",
        action="store_true",
        help="compute each fingerprint's story words before the clock (else a stored one computes them when written)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--copy", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if problem := check_base(args.base):
        parser.error(problem)
    if args.child:
        serve(args)
        return
    if args.base is None or args.store is None:
        parser.error("--base DIR and --store DIR are required")
    folder = Path(tempfile.mkdtemp(prefix="neardup-check-ab-", dir=args.workdir))
    trees = {"base": args.base.resolve(), "this tree": None}
    children: dict[str, subprocess.Popen] = {}
    try:
        for name, tree in trees.items():
            copy = folder / name.replace(" ", "-")
            shutil.copytree(args.store, copy)
            children[name] = start_child(tree, copy, args)
        for name, process in children.items():
            runs = json.loads(process.stdout.readline())["runs"]
            print(f"{name}: {runs} runs in its copy's bucket index{' (merged)' if args.merge else ''}")
        for process in children.values():
            ask(process, args.filler_start, args.warm)
        ratios, totals = [], dict.fromkeys(trees, 0.0)
        for pair in range(args.pairs):
            first = args.filler_start + args.warm + pair * args.count
            order = list(children) if pair % 2 == 0 else list(reversed(children))  # A B, then B A
            found = {name: ask(children[name], first, args.count) for name in order}
            for name, f in found.items():
                totals[name] += f["cpu_us"]
            ratios.append(found["this tree"]["cpu_us"] / found["base"]["cpu_us"])
            figures = "; ".join(
                f"{name} {found[name]['cpu_us']:.1f} µs a check ({found[name]['runs']} runs, load {found[name]['load']:.1f})"
                for name in trees
            )
            print(f"pair {pair + 1}: {figures}; this tree / base {ratios[-1]:.3f}", flush=True)
        print(
            f"median of this tree / base: {statistics.median(ratios):.3f} ({args.pairs} pairs); "
            f"mean µs a check: base {totals['base'] / args.pairs:.1f}, this tree {totals['this tree'] / args.pairs:.1f}"
        )
    finally:
        for process in children.values():
            if process.stdin:
                process.stdin.close()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
