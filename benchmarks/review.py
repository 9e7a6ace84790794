"""What review pages cost: kept texts (NEARDUP_KEEP_TEXT) per document, the page, the alignment.

The labelled reprint stream of ``reprints.py`` (one per seed) is checked in arrival order in
batches of 64, as ``neardup dedup`` does, on one store type (a fresh namespace each time), once
without and once with kept texts. Printed per seed and store:

- documents/s both ways (fingerprinting included, one process) and the ratio;
- kept text per stored story: the compressed bytes written, and their share of the text's UTF-8
  size; on LevelDB the growth of the compacted store on disk per story, on Redis the growth of
  the server's used memory per story;
- the review page of the run (every duplicate beside its first copy): seconds to build it,
  duplicates a second, bytes per duplicate section, pages written;
- the alignment alone: one news-length pair, a pair of 100,000-character texts, and a pair of
  50 MB texts (bounded by the alignment's cap: the figure that matters is that it stays seconds).

    python benchmarks/review.py                                  # seed 1998, memory://
    python benchmarks/review.py --store leveldb:///tmp/review-bench --seeds 1998 1999
    python benchmarks/review.py --store redis://localhost:6379/0
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reprints

from scrapy_neardup import Detector, Recipe, open_store
from scrapy_neardup.engine.verdicts import DUPLICATE
from scrapy_neardup.review.marking import align
from scrapy_neardup.review.page import FirstCopies, Pair, Report
from scrapy_neardup.stores.record import pack_text

BATCH = 64


def leveldb_path(uri: str) -> str | None:
    return uri[len("leveldb://") :] if uri.startswith("leveldb://") else None


def footprint(store, uri: str) -> int:
    """Bytes the store takes: a compacted LevelDB's files, a Redis server's used memory."""
    path = leveldb_path(uri)
    if path:
        store.compact()
        return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())
    if uri.startswith("redis"):
        return int(store.client.info("memory")["used_memory"])
    return 0


def run(docs: list[reprints.Doc], uri: str, keep: bool) -> tuple[list, float, int]:
    """Verdicts, seconds, and the store's growth in bytes, in a new namespace of ``uri``."""
    if leveldb_path(uri):
        shutil.rmtree(leveldb_path(uri), ignore_errors=True)
    store = open_store(uri, f"review-bench-{time.time_ns()}", Recipe())
    before = footprint(store, uri)
    texts = (lambda batch: {"texts": [d.text for d in batch]}) if keep else None
    verdicts, elapsed = reprints.check_stream(Detector(store), docs, texts, BATCH)
    grown = footprint(store, uri) - before
    store.close()
    return verdicts, elapsed, grown


def page(docs: list[reprints.Doc], verdicts: list) -> tuple[float, int, int, int]:
    """The run's review page: (seconds, duplicates, bytes, pages)."""
    folder = tempfile.mkdtemp(prefix="review-bench-")
    try:
        copies = FirstCopies()
        report = Report(os.path.join(folder, "review.html"))
        started = time.perf_counter()
        for doc, verdict in zip(docs, verdicts):
            if verdict.status == DUPLICATE:
                report.add(
                    Pair(
                        doc.key,
                        doc.text,
                        verdict.duplicate_of,
                        copies.text(verdict.similar_id),
                        verdict.method,
                        verdict.containment,
                        verdict.jaccard,
                        verdict.distance,
                    )
                )
            else:
                report.count(verdict.status)
                copies.remember(verdict.similar_id, doc.text)
        pages = report.write()
        report.close()
        elapsed = time.perf_counter() - started
        size = sum(os.path.getsize(p) for p in pages)
        return elapsed, report.verdicts[DUPLICATE], size, len(pages)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def alignments(docs: list[reprints.Doc]) -> str:
    """Seconds to align a news pair, a 100,000-character pair and a 50 MB pair."""
    reprinted = next(d for d in docs if d.kind == "reprint")
    original = next(d for d in docs if d.story == reprinted.story and d.kind != "reprint")
    shown = []
    for label, a, b in (
        ("news pair", original.text, reprinted.text),
        ("100k pair", "\n".join(d.text for d in docs)[:100_000], "\n".join(d.text for d in docs[1:])[:100_000]),
        (
            "50 MB pair",
            ("\n".join(d.text for d in docs) * 20)[:50_000_000],
            ("\n".join(d.text for d in docs[1:]) * 20)[:50_000_000],
        ),
    ):
        started = time.perf_counter()
        found = align(a, b)
        shown.append(f"{label} {time.perf_counter() - started:.3f} s ({len(found.pairs)} passages)")
    return ", ".join(shown)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(reprints.DEFAULT_DATA))
    parser.add_argument("--seeds", type=int, nargs="+", default=[1998])
    parser.add_argument("--store", default="memory://", help="memory://, leveldb://DIR (emptied) or redis://...")
    args = parser.parse_args(argv)
    for seed in args.seeds:
        docs = reprints.build_stream(args.data, seed)
        plain, plain_seconds, plain_bytes = run(docs, args.store, keep=False)
        kept, kept_seconds, kept_bytes = run(docs, args.store, keep=True)
        assert [v.status for v in plain] == [v.status for v in kept], "keeping texts changed a verdict"
        stored = [d for d, v in zip(docs, kept) if v.stored and v.status != DUPLICATE]
        packed = sum(len(pack_text(d.text)) for d in stored)
        utf8 = sum(len(d.text.encode("utf-8")) for d in stored)
        growth = ""
        if plain_bytes or kept_bytes:
            growth = f", store growth {(kept_bytes - plain_bytes) / len(stored):.0f} B/story more with texts"
        seconds, duplicates, size, pages = page(docs, kept)
        print(
            f"seed {seed} {args.store}: {len(docs)} documents, {len(stored)} stored; documents/s "
            f"{len(docs) / plain_seconds:.0f} without texts, {len(docs) / kept_seconds:.0f} with "
            f"({kept_seconds / plain_seconds:.2f}x the time); kept text {packed / len(stored):.0f} B/story "
            f"compressed ({packed / utf8:.0%} of {utf8 / len(stored):.0f} B UTF-8){growth}; review page: "
            f"{duplicates} duplicates in {seconds:.2f} s ({duplicates / seconds:.0f}/s), "
            f"{size / max(1, duplicates) / 1024:.1f} KB a section, {pages} pages",
            flush=True,
        )
    print(f"alignment: {alignments(docs)}", flush=True)


if __name__ == "__main__":
    main()
