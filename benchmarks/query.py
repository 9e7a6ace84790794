"""``Detector.query`` on a held-out-style stream: ranking, false duplicates and queries/s.

The labelled reprint stream of ``reprints.py`` is split by story: the first copy of every
second story is stored (through ``Detector.check``, in arrival order, into a LevelDB store
that synthetic news-length fillers of ``corpus.FillerTexts`` fill to ``--size`` documents
first), and then, with nothing stored any more, every later copy of a stored story and every
document of a story never stored is queried (``Detector.query_many`` in batches of 64, as
``neardup query`` does; fingerprinting included in the time).

Printed: for the later copies, how often the stored first copy is ranked first and marked
duplicate; for the stories never stored (their quotes of stored stories and same-topic pairs
included), how often no entry is marked duplicate; queries/s at the store's size, one
process, by the clock and by the process's CPU time (the second holds on a loaded machine); and that the store's document count did not change.

    python benchmarks/query.py                         # 100k stored, rjieba
    python benchmarks/query.py --size 1000000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
import reprints

from scrapy_neardup import DUPLICATE, Detector, Recipe, open_store

BATCH = 64


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def fill(detector: Detector, size: int, data: Path) -> float:
    """Store ``size`` filler texts; returns the seconds it took."""
    articles = corpus.load_articles(data)
    fillers = corpus.FillerTexts(corpus.sentence_pool(articles[len(articles) // 2 :]))
    started = time.perf_counter()
    for start in range(0, size, 10_000):
        texts = fillers.chunk(start, min(size, start + 10_000))
        for offset, text in enumerate(texts):
            detector.check(f"filler/{start + offset}", text)
        print(f"  filled {start + len(texts):,} ({time.perf_counter() - started:.0f} s, {load()})", flush=True)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpus.add_data_option(parser)
    parser.add_argument("--size", type=int, default=100_000, help="filler documents stored first")
    parser.add_argument("--seed", type=int, default=reprints.DEFAULT_SEED)
    parser.add_argument("--tokenizer", default="rjieba")
    parser.add_argument("-k", type=int, default=10)
    args = parser.parse_args(argv)

    docs = reprints.build_stream(args.data, args.seed)
    stored_stories = {doc.story for doc in docs if doc.story % 2 == 0}
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"leveldb://{folder}/store", recipe=Recipe(tokenizer=args.tokenizer))
        detector = Detector(store)
        print(f"filling {args.size:,} fillers, {load()}")
        fill_seconds = fill(detector, args.size, args.data)
        first: dict[int, str] = {}  # story -> the key of its stored first copy
        queried = []
        not_stored = 0
        for doc in docs:
            if doc.story not in stored_stories or doc.story in first:
                queried.append(doc)
            else:
                verdict = detector.check(doc.key, doc.text)
                first[doc.story] = doc.key
                if verdict.status == DUPLICATE:
                    not_stored += 1
                    first[doc.story] = ""  # judged a copy of another story: nothing to find
        count = store.count()
        print(
            f"stored {count:,} documents ({len(first)} first copies, {not_stored} of them "
            f"judged duplicates and not stored); querying {len(queried)}, {load()}"
        )

        started, cpu = time.perf_counter(), time.process_time()
        answers = []
        for start in range(0, len(queried), BATCH):
            batch = queried[start : start + BATCH]
            prints = [detector.fingerprint(doc.text) for doc in batch]
            answers += detector.query_many(prints, args.k, keys=[doc.key for doc in batch])
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert store.count() == count, "a query changed the store"
        store.close()

    copies = Counter()
    new = Counter()
    for doc, similar in zip(queried, answers):
        if doc.story in stored_stories:
            if not first.get(doc.story):
                copies["first copy not stored"] += 1
                continue
            copies["copies"] += 1
            top = similar[0] if similar else None
            if top is not None and top.key == first[doc.story]:
                copies["ranked first"] += 1
                copies["ranked first and duplicate"] += top.duplicate
            elif any(s.key == first[doc.story] for s in similar):
                copies["listed below another entry"] += 1
            else:
                copies["not listed"] += 1
            if any(s.key == first[doc.story] and s.duplicate for s in similar):
                copies["marked duplicate"] += 1
        else:
            new[doc.kind] += 1
            new["all"] += 1
            if any(s.duplicate for s in similar):
                new["false duplicate"] += 1
                new[f"false duplicate ({doc.kind})"] += 1
            if similar:
                new["with entries"] += 1

    def share(part: int, whole: int) -> str:
        return f"{part}/{whole} = {100.0 * part / max(1, whole):.2f}%"

    print(
        f"\nstore: LevelDB, {count:,} documents ({args.size:,} fillers filled in {fill_seconds:.0f} s), "
        f"tokenizer {args.tokenizer}"
    )
    print(
        f"later copies of stored stories: first copy ranked first and marked duplicate "
        f"{share(copies['ranked first and duplicate'], copies['copies'])}; ranked first "
        f"{share(copies['ranked first'], copies['copies'])}; marked duplicate anywhere "
        f"{share(copies['marked duplicate'], copies['copies'])}; not ranked first: listed below another "
        f"entry {copies['listed below another entry']}, not listed {copies['not listed']}; skipped (first copy "
        f"not stored) {copies['first copy not stored']}"
    )
    kinds = ", ".join(
        f"{kind} {n}"
        for kind, n in sorted(new.items())
        if "duplicate" not in kind and kind != "all" and kind != "with entries"
    )
    print(
        f"documents of stories never stored ({kinds}): no entry marked duplicate "
        f"{share(new['all'] - new['false duplicate'], new['all'])}; with some entry listed "
        f"{new['with entries']}; false duplicates by kind: "
        + (", ".join(f"{k[17:-1]} {n}" for k, n in new.items() if k.startswith("false duplicate (")) or "none")
    )
    print(
        f"speed: {len(queried)} queries in {seconds:.2f} s = {len(queried) / seconds:,.0f} queries/s "
        f"(fingerprint + lookup + ranking, batches of {BATCH}, one process); "
        f"{len(queried) / cpu:,.0f} queries per CPU second ({cpu:.2f} s of CPU), {load()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
