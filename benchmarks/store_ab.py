"""The LevelDB store's share of a check in two engines, taking turns on the same fingerprints.

``speed.py`` times whole checks, most of which is fingerprinting, and runs one engine after
the other: on a shared machine the load moves between the two. Here the texts are
fingerprinted once (synthetic news-length fillers, ``corpus.FillerTexts``; kept in a file
beside the stores for the next run), and two processes, one importing this tree's engine and
one the engine of ``--base DIR`` (``git archive COMMIT | tar -x -C DIR``, its C kernel built in
place), each fill a LevelDB store of their own through ``Detector.check_fingerprint``, a step
each in turn: per step, the CPU time of a check (the store's lookup, verification and insert),
the CPU time of the whole process a check (with LevelDB's compactions and the index's
writing and merging of runs, in threads of their own), its wall time, and each process's RSS
growth per stored document, split as speed.py splits it. With ``--disk``, each store is then
compacted (``LevelDBStore.compact``: LevelDB's ``compact_range`` and the bucket index merged into
one run) and its bytes on disk a document printed: the records' own bytes, the index's files
and the rest (LevelDB's keys, block trailers and table indexes).

    python benchmarks/store_ab.py --base /tmp/main-tree --documents 1000000 --step 100000
    python benchmarks/store_ab.py --base /tmp/main-tree --documents 1000000 --step 250000 --disk
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus

CHUNK = 10_000  # fingerprints a pickle record of the fingerprint file holds


def make_fingerprints(args: argparse.Namespace, path: Path) -> None:
    from scrapy_neardup import Fingerprinter, Recipe

    articles = corpus.load_articles(args.data)
    texts = corpus.FillerTexts(corpus.sentence_pool(articles[len(articles) // 2 :]))
    fingerprinter = Fingerprinter(Recipe(tokenizer="rjieba"))
    partial = path.with_suffix(".partial")
    with partial.open("wb") as out:
        for start in range(0, args.documents, CHUNK):
            chunk = texts.chunk(start, min(args.documents, start + CHUNK))
            pickle.dump([fingerprinter.fingerprint(text) for text in chunk], out)
            print(f"fingerprinted {start + len(chunk):,}", file=sys.stderr, flush=True)
    partial.rename(path)


def engine_process(command: list[str], tree: Path | None) -> subprocess.Popen:
    """``command`` (a script's child mode) in a process of its own, talking through pipes, with
    the engine of the source tree ``tree`` (None: this tree's) first on the path from the
    start: ``corpus`` imports the package, before any option of the child is read."""
    path = os.pathsep.join(filter(None, [str(tree) if tree else "", os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen(
        command + (["--engine-path", str(tree)] if tree is not None else []),
        env={**os.environ, "PYTHONPATH": path},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def check_engine(engine_path: str | None) -> None:
    """Stop a child that imported another engine than the one it was given."""
    import scrapy_neardup

    if engine_path and not Path(scrapy_neardup.__file__).is_relative_to(engine_path):
        sys.exit(f"the engine was imported from {scrapy_neardup.__file__}, not from {engine_path}")


def child(args: argparse.Namespace) -> None:
    """Fill a store step by step on the parent's word; answer each step with its figures."""
    from speed import rss_bytes, rss_parts

    from scrapy_neardup import Detector, Recipe, open_store

    check_engine(args.engine_path)

    shutil.rmtree(args.store, ignore_errors=True)
    store = open_store(f"leveldb://{args.store}", recipe=Recipe(tokenizer="rjieba"))
    detector = Detector(store)
    source = open(args.fingerprints, "rb")  # noqa: SIM115 - read a chunk at a time until the end
    pending: list = []
    number = 0
    base, base_parts = rss_bytes(), rss_parts()
    for line in sys.stdin:
        if line.strip() == "disk":
            print(json.dumps(disk_figures(store, args.store)), flush=True)
            continue
        stop = int(line)
        cpu, process_cpu, wall, checked = time.thread_time(), time.process_time(), time.perf_counter(), 0
        while number < stop:
            if not pending:
                pending = pickle.load(source)
            fingerprint = pending.pop(0)
            detector.check_fingerprint(f"filler-{number}", fingerprint)
            number += 1
            checked += 1
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        process_cpu = time.process_time() - process_cpu
        rss = rss_bytes()  # first: it gives freed heap back
        parts = rss_parts()
        figures = {
            "stored": store.count(),
            "cpu_us": cpu / checked * 1e6,
            "process_cpu_us": process_cpu / checked * 1e6,
            "wall_us": wall / checked * 1e6,
            "rss_per_doc": (rss - base) / number,
            "parts_per_doc": {k: (parts[k] - base_parts.get(k, 0)) / number for k in parts},
            "load": os.getloadavg()[0],
        }
        print(json.dumps(figures), flush=True)
    store.close()
    shutil.rmtree(args.store, ignore_errors=True)


def disk_figures(store, path: str) -> dict:
    """Bytes on disk a stored document, compacted, in parts (see the module's docstring)."""
    from speed import disk_bytes

    started = time.perf_counter()
    store.compact()
    stored = store.count()
    records = sum(len(record.to_bytes()) for record in store.records())
    index = sum(disk_bytes(str(folder)) for folder in Path(path).glob("neardup-index-*"))
    return {
        "stored": stored,
        "compact_s": time.perf_counter() - started,
        "disk": disk_bytes(path) / stored,
        "records": records / stored,
        "index": index / stored,
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--base", type=Path, help="source tree of the other engine (required)")
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--step", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp"), help="where the stores and fingerprints go")
    parser.add_argument("--disk", action="store_true", help="at the end, compact each store and print its size")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--fingerprints", help=argparse.SUPPRESS)
    parser.add_argument("--engine-path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.base is None:
        parser.error("--base DIR is required: the source tree of the engine to compare with")
    fingerprints = args.workdir / f"neardup-fingerprints-{args.documents}.pickle"
    if not fingerprints.exists():
        make_fingerprints(args, fingerprints)
    engines = {"this tree": None, "base": args.base.resolve()}
    children = {}
    for name, tree in engines.items():
        store = args.workdir / f"neardup-store-ab-{'base' if tree else 'this'}-{os.getpid()}"
        command = [sys.executable, __file__, "--child", "--store", str(store), "--fingerprints", str(fingerprints)]
        children[name] = engine_process(command, tree)
    print("| stored | engine | CPU µs a check | process CPU µs | wall µs | RSS B/doc (anon + file) | load |")
    print("|---|---|---|---|---|---|---|")
    for stop in range(args.step, args.documents + 1, args.step):
        for name, process in children.items():  # the same step, one engine after the other
            process.stdin.write(f"{stop}\n")
            process.stdin.flush()
            f = json.loads(process.stdout.readline())
            parts = " + ".join(f"{v:,.0f}" for k, v in f["parts_per_doc"].items() if k != "shmem")
            print(
                f"| {f['stored']:,} | {name} | {f['cpu_us']:,.0f} | {f['process_cpu_us']:,.0f} | {f['wall_us']:,.0f} | "
                f"{f['rss_per_doc']:,.0f} ({parts}) | {f['load']:.1f} |",
                flush=True,
            )
    if args.disk:
        print("\n| stored | engine | disk B/doc | records | bucket index | rest | compaction s | load |")
        print("|---|---|---|---|---|---|---|---|")
        for name, process in children.items():
            process.stdin.write("disk\n")
            process.stdin.flush()
            f = json.loads(process.stdout.readline())
            rest = f["disk"] - f["records"] - f["index"]
            print(
                f"| {f['stored']:,} | {name} | {f['disk']:,.0f} | {f['records']:,.0f} | {f['index']:,.0f} | "
                f"{rest:,.0f} | {f['compact_s']:,.1f} | {f['load']:.1f} |",
                flush=True,
            )
    for process in children.values():
        process.stdin.close()
        process.wait()


if __name__ == "__main__":
    main()
