"""Related stories (``neardup dedup --related``) on the labelled reprint stream's quotes.

The stream of ``reprints.py`` (one per seed) is checked in arrival order in batches of 64,
as ``neardup dedup`` does, once without and once with related stories, on one store type
(a fresh one each time). Its quote hard negatives are originals that quote one or two long
sentences of an earlier story, inside a frame of their own ("据报道，“...”").

Printed per seed:
- recall: of the quoting articles whose quoted story arrived before them, the share whose
  related list names a stored copy of the quoted story (floor: 90%);
- passages: of every passage listed (all documents), the share whose content characters
  occur in both texts, the document's and the listed story's stored copy's (floor: 98%);
- verdicts identical with and without, and documents/s both ways (fingerprinting and
  passages included, one process), measured in one run.

    python benchmarks/related.py                       # seeds 1998 1999 2000, memory://
    python benchmarks/related.py --store leveldb:///tmp/related-bench
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reprints

from scrapy_neardup import Detector, Recipe, open_store
from scrapy_neardup.fingerprints.passages import passages_of
from scrapy_neardup.fingerprints.text import content_chars

BATCH = 64


def run(docs: list[reprints.Doc], uri: str, related: bool) -> tuple[list, float]:
    """Verdicts of the stream and the seconds it took, in a new namespace of ``uri``."""
    store = open_store(uri, f"related-bench-{time.time_ns()}", Recipe())
    passages = (lambda batch: {"passages": [passages_of(d.text) for d in batch]}) if related else None
    verdicts, elapsed = reprints.check_stream(Detector(store), docs, passages, BATCH)
    store.close()
    return verdicts, elapsed


def measure(docs: list[reprints.Doc], verdicts: list) -> tuple[int, int, int, int]:
    """(quotes found, quotes asked, passages in both texts, passages listed)."""
    by_key = {d.key: d for d in docs}
    arrived: set[int] = set()
    found = asked = good = listed = 0
    for doc, verdict in zip(docs, verdicts):
        if doc.kind == "quote" and doc.quoted_story in arrived:
            asked += 1
            found += any(by_key[r["key"]].story == doc.quoted_story for r in verdict.related or [])
        arrived.add(doc.story)
        text = content_chars(doc.text)
        for entry in verdict.related or []:
            other = content_chars(by_key[entry["key"]].text)
            for passage in entry["shared"]:
                listed += 1
                good += content_chars(passage) in text and content_chars(passage) in other
    return found, asked, good, listed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(reprints.DEFAULT_DATA))
    parser.add_argument("--seeds", type=int, nargs="+", default=[1998, 1999, 2000])
    parser.add_argument("--store", default="memory://", help="memory://, leveldb://DIR (emptied) or redis://...")
    args = parser.parse_args(argv)
    for seed in args.seeds:
        docs = reprints.build_stream(args.data, seed)
        timings, runs = {}, {}
        for related in (False, True):
            if args.store.startswith("leveldb://"):
                shutil.rmtree(args.store[len("leveldb://") :], ignore_errors=True)
            runs[related], timings[related] = run(docs, args.store, related)
        plain, verdicts = runs[False], runs[True]
        same = [v.status for v in plain] == [v.status for v in verdicts] and [v.duplicate_of for v in plain] == [
            v.duplicate_of for v in verdicts
        ]
        found, asked, good, listed = measure(docs, verdicts)
        print(
            f"seed {seed}: {len(docs)} documents, quotes found {found}/{asked} = {found / max(1, asked):.2%}, "
            f"passages in both texts {good}/{listed} = {good / max(1, listed):.2%}, verdicts identical: {same}, "
            f"documents/s {len(docs) / timings[False]:.0f} without, {len(docs) / timings[True]:.0f} with "
            f"({timings[True] / timings[False]:.2f}x the time)",
            flush=True,
        )


if __name__ == "__main__":
    main()
