"""Where a lookup's candidates come from, and what each stage of a check costs, on a filled store.

Runs streams of documents that the store does not hold through ``Detector.check_fingerprint``
on a LevelDB store that ``speed.py --keep`` filled, and for each stream prints:

- candidates a lookup, split by the bucket that brought them: a sketch key (one of the smallest
  shingle hashes), an nshash sentence key, a SimHash table, the document's own key; a
  candidate brought by several counts once, under the first of these;
- the same count as the store would have answered when it held only its first 1M, 2M, ...
  documents (candidates whose id is at most that; a bucket the larger store finds
  boilerplate is left out at every size), so that one store shows how candidates grow;
- the records read a lookup (a store may pass over candidates it knows the verdict rule would);
- the share of candidates that confirmed a duplicate;
- CPU a document (this thread's) by stage: fingerprint, key reads (bucket members), candidate
  reads (records), confirmation (the verdict rule on the candidates), write (filing a new
  document), and the rest of the check.

Streams: ``fillers`` (new texts of ``corpus.FillerTexts``, as speed.py fills the store with, from
an index far past the fill), ``news`` (the People's Daily articles speed.py measures, joined to news
length, each reprinted 1 to 20 articles later: real text, none of it in the store), and
``pages`` (the hand-copied bodies of zh-cwce's 69 Chinese web pages). Every document a stream
stores is taken out again afterwards, so the store ends as it started; still, run it on a copy
of a store you keep (it writes while it runs).

    python benchmarks/lookup_cost.py --store /tmp/neardup-speed-rjieba-PID --count 400
    python benchmarks/lookup_cost.py --store COPY --learn-simhashes   # a store saved by an earlier version
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import corpus
from speed import make_batch

from scrapy_neardup import Detector, Recipe, open_store
from scrapy_neardup.stores.base import key_buckets, sentence_bucket

SOURCES = ("sketch", "nshash", "simhash", "key")
STAGES = ("fingerprint", "key reads", "candidate reads", "confirmation", "write", "rest")


class Timed:
    """Adds the thread CPU time of calls to ``owner.name`` under ``stage``."""

    def __init__(self, totals: Counter, stage: str, owner: object, name: str):
        inner = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                totals[stage] += time.thread_time() - start

        setattr(owner, name, timed)


def streams(args: argparse.Namespace) -> dict[str, tuple[list[str], list[str]]]:
    articles = corpus.load_articles(args.data)
    half = len(articles) // 2
    fillers = corpus.FillerTexts(corpus.sentence_pool(articles[half:]))
    out: dict[str, tuple[list[str], list[str]]] = {}
    start = args.filler_start
    texts = fillers.chunk(start, start + args.count)
    out["fillers"] = ([f"lc-filler-{start + i}" for i in range(len(texts))], texts)
    batch = make_batch(corpus.news_length_docs(articles[:half]))
    out["news"] = ([f"lc-{key}" for key in batch.keys[: args.count]], batch.texts[: args.count])
    pages_path = args.data / "zh-cwce" / "zh_cwce.jsonl.gz"
    if pages_path.exists():
        pages = [r["text"] for r in corpus.load_jsonl(pages_path) if r.get("text")]
        out["pages"] = ([f"lc-page-{i}" for i in range(len(pages))], pages)
    return out


def measure(detector: Detector, store, keys: list[str], texts: list[str], sizes: list[int]) -> dict:
    totals: Counter = Counter()
    sources: Counter = Counter()
    by_size: Counter = Counter()
    seen = {"lookups": 0, "candidates": 0, "read": 0, "duplicates": 0}
    stored: list[int] = []
    limit = detector.boilerplate_limit
    read_limit = 1_000_000

    def classify(probe, record, reservation) -> None:
        """Untimed: the candidates the buckets brought (as the store reads them, before it
        files the document), which bucket brought each, and which the store held at each size."""
        count_sketch = probe.nshash_n - detector.recipe.nshash_n
        keys_ = probe.sentence_keys
        groups = [
            ("sketch", [sentence_bucket(k) for k in keys_[:count_sketch]], limit),
            ("nshash", [sentence_bucket(k) for k in keys_[count_sketch:]], limit),
            ("simhash", probe.simhash_buckets, probe.bucket_read_limit),
            ("key", key_buckets(record.key), probe.bucket_read_limit),
        ]
        counted: set[int] = set()
        for name, buckets, cap in groups:
            for members in store._index.members_each(buckets, read_limit):
                members = [doc_id for doc_id in members if doc_id != reservation.doc_id]  # filed since
                if cap == limit and len(members) >= limit:
                    continue  # boilerplate at this size: neither key nor evidence
                for doc_id in members[:cap]:
                    if doc_id not in counted:
                        counted.add(doc_id)
                        sources[name] += 1
                        for size in sizes:
                            if doc_id <= size:
                                by_size[size] += 1
        seen["candidates"] += len(counted)

    inner = store.check_and_add

    def check_and_add(probe, record, confirm=None):
        reservation = inner(probe, record, confirm)
        start = time.thread_time()
        classify(probe, record, reservation)
        totals["classify"] += time.thread_time() - start
        seen["lookups"] += 1
        seen["read"] += len(reservation.candidates)
        return reservation

    store.check_and_add = check_and_add
    Timed(totals, "key reads", store, "_members_of")
    Timed(totals, "candidate reads", store, "_records")
    Timed(totals, "confirmation", detector, "_decide")
    Timed(totals, "write", store, "_save")
    check_fp, fingerprint = detector.check_fingerprint, detector.fingerprint
    whole = 0.0
    for key, text in zip(keys, texts):
        c0 = time.thread_time()
        fp = fingerprint(text)
        c1 = time.thread_time()
        verdict = check_fp(key, fp)
        whole += time.thread_time() - c1
        totals["fingerprint"] += c1 - c0
        if verdict.status == "unique":
            stored.append(verdict.doc_id)
        elif verdict.status == "duplicate":
            seen["duplicates"] += 1
    del store.check_and_add, store._members_of, store._records, store._save, detector._decide
    for doc_id in stored:
        store.remove(doc_id)
    measured = whole - totals["classify"]
    totals["rest"] = measured - sum(totals[s] for s in STAGES[1:5])
    return {"n": len(keys), "cpu": dict(totals), "sources": dict(sources), "by_size": dict(by_size), **seen}


def report(name: str, r: dict, sizes: list[int]) -> None:
    n, lookups = r["n"], max(1, r["lookups"])
    per = {s: r["cpu"].get(s, 0.0) / n * 1e6 for s in STAGES}
    total = sum(per.values())
    cands = r["candidates"] / lookups
    split = ", ".join(f"{s} {r['sources'].get(s, 0) / lookups:.2f}" for s in SOURCES)
    grow = ", ".join(f"{size / 1e6:g}M {r['by_size'].get(size, 0) / lookups:.2f}" for size in sizes)
    share = r["duplicates"] / r["candidates"] if r["candidates"] else 0.0
    print(f"\n{name}: {n} documents, {r['lookups']} lookups, {r['duplicates']} judged duplicates")
    print(f"  candidates a lookup {cands:.2f} ({split}); records read a lookup {r['read'] / lookups:.2f}")
    print(f"  as at a store of {grow}")
    print(f"  duplicates a candidate {share:.3f}")
    stages = ", ".join(f"{s} {per[s]:.0f}" for s in STAGES)
    print(f"  CPU us a document {total:.0f} = {stages}; docs a CPU-second {1e6 / total:,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--store", required=True, type=Path, help="the LevelDB folder speed.py --keep left")
    parser.add_argument("--tokenizer", default="rjieba")
    parser.add_argument("--count", type=int, default=2000, help="documents of each stream")
    parser.add_argument("--filler-start", type=int, default=50_000_000, help="first filler index (past the fill)")
    parser.add_argument("--streams", default="fillers,news,pages")
    parser.add_argument(
        "--learn-simhashes",
        action="store_true",
        help="first read every record once, so that a store saved by an earlier version knows its SimHashes and signatures",
    )
    args = parser.parse_args()
    store = open_store(f"leveldb://{args.store}", recipe=Recipe(tokenizer=args.tokenizer), create=False)
    detector = Detector(store)
    if args.learn_simhashes:
        started = time.perf_counter()
        for record in store.records():
            store._simhashes.put(record.doc_id, record.simhash, store.buckets_of(record))
        print(f"SimHashes of every record learnt in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    total = store.count()
    sizes = [m * 1_000_000 for m in range(1, total // 1_000_000 + 1)] + [total]
    engine = Path(sys.modules[Detector.__module__].__file__ or "").parents[2]
    print(f"lookup_cost.py: engine {engine}; {args.store}, {total:,} stored; load {os.getloadavg()[0]:.1f}")
    chosen = [s.strip() for s in args.streams.split(",")]
    made = streams(args)
    detector.fingerprint(made["news"][1][0])  # load the tokenizer before anything is timed
    for name in chosen:
        keys, texts = made[name]
        report(name, measure(detector, store, keys, texts, sizes), sizes)
    print(f"\nload {os.getloadavg()[0]:.1f} at the end; {store.count():,} stored")
    store.close()


if __name__ == "__main__":
    main()
