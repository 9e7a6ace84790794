"""speed.py's batch on one kept store, by two source trees in turn: their documents per CPU-second.

``check_ab.py`` gives each tree a copy of the store, open side by side; a store of 10M is 10 GB,
too large to copy twice. Here the trees take turns on the store itself: each round, a process of
each tree (the first of a round alternating) opens the store, reads one record of every table
untimed (``fill_on.open_every_table``), and checks speed.py's batch of news and reprints
``--passes`` times, each pass undone, so that both find the store as it was. Printed: each
process's best and median pass (documents a CPU-second of its thread), this tree's over the
base's for each round, and their medians. A process's figures move with the machine by a few
per cent from one process to the next: compare the medians of many rounds, never one round.

    python benchmarks/batch_ab.py --store /tmp/neardup-speed-rjieba-PID --base /tmp/main-tree
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from trees import check_base

HERE = Path(__file__).resolve().parents[1]


def child(args: argparse.Namespace) -> None:
    """One process of one tree (the tree's package first on the path): its passes' figures."""
    from fill_on import open_every_table
    from speed import EngineSubject, make_batch

    articles = corpus.load_articles(args.data)
    batch = make_batch(corpus.news_length_docs(articles[: len(articles) // 2]))
    subject = EngineSubject(args.tokenizer, "", path=str(args.store))
    try:
        subject.warm_up(batch.texts[:50])
        open_every_table(subject.store)
        rates = []
        for number in range(args.passes):
            clock, _ = subject.run_batch(batch, f"ab{number}")
            subject.undo_batch()
            rates.append(len(batch.keys) / clock.cpu)
    finally:
        subject.close()
    print(json.dumps({"best": max(rates), "median": statistics.median(rates)}), flush=True)


def run_tree(args: argparse.Namespace, tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, __file__, "--child", "--store", str(args.store), "--passes", str(args.passes)]
    command += ["--tokenizer", args.tokenizer, "--data", str(args.data)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{tree}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, type=Path, help="a LevelDB store speed.py --keep left")
    parser.add_argument("--base", type=Path, help="the other source tree (its compiled parts built in place)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--passes", type=int, default=8, help="passes over the batch in each process")
    parser.add_argument("--tokenizer", default="rjieba")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    corpus.add_data_option(parser)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.base is None:
        parser.error("--base is required")
    problem = check_base(args.base)
    if problem:
        sys.exit(problem)
    trees = {"base": args.base.resolve(), "this": HERE}
    found: dict[str, list[dict]] = {"base": [], "this": []}
    for number in range(args.rounds):
        order = ["base", "this"] if number % 2 == 0 else ["this", "base"]
        for name in order:
            found[name].append(run_tree(args, trees[name]))
        base, this = found["base"][-1], found["this"][-1]
        print(
            f"round {number + 1}: base {base['best']:,.0f} (median {base['median']:,.0f}), "
            f"this {this['best']:,.0f} ({this['median']:,.0f}): {this['best'] / base['best']:.3f} "
            f"({this['median'] / base['median']:.3f}); load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    for figure in ("best", "median"):
        ratios = [t[figure] / b[figure] for b, t in zip(found["base"], found["this"])]
        print(
            f"{figure} pass of a process, median of {args.rounds} rounds: base "
            f"{statistics.median(b[figure] for b in found['base']):,.0f}, this "
            f"{statistics.median(t[figure] for t in found['this']):,.0f} docs/CPU-s; "
            f"this over base {statistics.median(ratios):.3f} (rounds {min(ratios):.3f}-{max(ratios):.3f})"
        )


if __name__ == "__main__":
    main()
