"""Checks of new documents by two source trees in turn, each on its own copy of one filled
LevelDB store: their CPU a check.

``store_ab.py`` has each tree fill a store of its own from empty, so its stores differ in what
their runs of the bucket index hold at each step and in when they merge; here both start from
copies of one store (``speed.py --keep`` or ``store_ab.py`` filled it). With ``--merge`` each
tree first merges its copy's bucket index into one run, so the runs carry that tree's layout
(their filters, say). Then, ``--pairs`` times, a process of the base tree and one of this tree
each check ``--warm`` and then ``--count`` new fillers (``corpus.FillerTexts``, from
``--filler-start`` on, fingerprinted before the clock starts) through
``Detector.check_fingerprint`` on its copy; only the last ``--count`` are timed (this thread's
CPU). Each pair takes the next fillers, so both copies grow alike. Printed: each process's CPU
microseconds a check, and this tree's over the base's for each pair, then their median.

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


def measure(args: argparse.Namespace) -> dict:
    from scrapy_neardup import Detector, Recipe, open_store

    store = open_store(f"leveldb://{args.copy}", recipe=Recipe(tokenizer="rjieba"), create=False)
    try:
        if args.merge:
            store._index.merge_all()
            return {"runs": len(store._index.runs)}
        articles = corpus.load_articles(args.data)
        fillers = corpus.FillerTexts(corpus.sentence_pool(articles[len(articles) // 2 :]))
        detector = Detector(store)
        texts = fillers.chunk(args.filler_start, args.filler_start + args.warm + args.count)
        fingerprints = [detector.fingerprint(text) for text in texts]
        keys = [f"check-ab-{args.filler_start + n}" for n in range(len(texts))]
        for key, fingerprint in zip(keys[: args.warm], fingerprints[: args.warm]):
            detector.check_fingerprint(key, fingerprint)
        start = time.thread_time()
        for key, fingerprint in zip(keys[args.warm :], fingerprints[args.warm :]):
            detector.check_fingerprint(key, fingerprint)
        cpu = (time.thread_time() - start) / args.count
        return {"cpu_us": cpu * 1e6, "runs": len(store._index.runs), "load": os.getloadavg()[0]}
    finally:
        store.close()


def child(tree: Path | None, copy: Path, args: argparse.Namespace, extra: list[str]) -> dict:
    """One process importing the package of ``tree`` (None: this tree's)."""
    env = dict(os.environ)
    here = Path(__file__).resolve().parent
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (tree or here.parent, here))
    command = [sys.executable, __file__, "--child", "--copy", str(copy), "--data", str(args.data), *extra]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--base", type=Path, help="source tree to compare (C kernel built in place)")
    parser.add_argument("--store", type=Path, help="a filled LevelDB store, copied twice (left as it is)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()), help="where the copies go")
    parser.add_argument("--merge", action="store_true", help="each tree merges its copy's bucket index first")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--warm", type=int, default=2000, help="checks of each process before the timed ones")
    parser.add_argument("--count", type=int, default=4000, help="timed checks of each process")
    parser.add_argument("--filler-start", type=int, default=60_000_000, help="first filler index (past the fill)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--copy", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if problem := check_base(args.base):
        parser.error(problem)
    if args.child:
        print(json.dumps(measure(args)))
        return
    if args.base is None or args.store is None:
        parser.error("--base DIR and --store DIR are required")
    folder = Path(tempfile.mkdtemp(prefix="neardup-check-ab-", dir=args.workdir))
    trees = {"base": args.base.resolve(), "this tree": None}
    try:
        copies = {name: folder / name.replace(" ", "-") for name in trees}
        for name, tree in trees.items():
            shutil.copytree(args.store, copies[name])
            if args.merge:
                runs = child(tree, copies[name], args, ["--merge"])["runs"]
                print(f"{name}: its copy's bucket index merged into {runs} run")
        ratios = []
        for pair in range(args.pairs):
            start = args.filler_start + pair * (args.warm + args.count)
            common = ["--warm", str(args.warm), "--count", str(args.count), "--filler-start", str(start)]
            found = {name: child(tree, copies[name], args, common) for name, tree in trees.items()}
            ratios.append(found["this tree"]["cpu_us"] / found["base"]["cpu_us"])
            figures = "; ".join(
                f"{name} {f['cpu_us']:.1f} µs a check ({f['runs']} runs, load {f['load']:.1f})"
                for name, f in found.items()
            )
            print(f"pair {pair + 1}: {figures}; this tree / base {ratios[-1]:.3f}", flush=True)
        print(f"median of this tree / base: {statistics.median(ratios):.3f} ({args.pairs} pairs)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
