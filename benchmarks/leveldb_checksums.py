"""Cost of verifying LevelDB block checksums on every read of the LevelDB store.

The store reads with ``verify_checksums=True`` (scrapy_neardup/stores/leveldb/store.py, ``_VERIFY``).
A store is filled with ``--documents`` synthetic news-length texts (``corpus.FillerTexts``)
and compacted, so the records sit in table files. Two figures, each the best of ``--passes``
with verification off and on in turn:

- a record read (``DB.get`` of a random record), with the block cache bypassed
  (``fill_cache=False``, so every read decodes a block: the most verification can cost) and
  with the cache warm;
- the store's part of a check, ``Detector.check_fingerprint`` on fingerprints made
  beforehand (lookup, record reads of the candidates, verification, insert), for a batch of
  reprints of stored documents and as many new ones; what the batch stored is taken out
  after each pass.

    python benchmarks/leveldb_checksums.py                 # 30,000 documents, batch of 2,000
    python benchmarks/leveldb_checksums.py --documents 5000 --batch 500 --passes 3
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus


def best_of(passes: int, run) -> dict[bool, float]:
    """Seconds of ``run(verify)``: the best of ``passes`` for each setting, taken in turn."""
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(passes):
        for verify in (False, True):
            times[verify].append(run(verify))
    return {verify: min(found) for verify, found in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    corpus.add_data_option(parser)
    parser.add_argument("--documents", type=int, default=30_000)
    parser.add_argument("--batch", type=int, default=2_000, help="reprints and new documents, each")
    parser.add_argument("--reads", type=int, default=50_000)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()

    from scrapy_neardup import Detector, open_store
    from scrapy_neardup.stores.leveldb import store as leveldb

    articles = corpus.load_articles(args.data)
    half = len(articles) // 2
    fillers = corpus.FillerTexts(corpus.sentence_pool(articles[half:]))
    rng = random.Random(7)
    workdir = tempfile.mkdtemp(prefix="neardup-checksums-")
    try:
        store = open_store(f"leveldb://{workdir}/db")
        detector = Detector(store)
        stored = fillers.chunk(0, args.documents)
        for number, text in enumerate(stored):
            detector.check(f"f{number}", text)
        store.compact()

        db, prefix = store._shared.db, store._doc_prefix
        ids = [rng.randint(1, args.documents) for _ in range(args.reads)]
        keys = [prefix + doc_id.to_bytes(8, "big") for doc_id in ids]

        def reads(fill_cache: bool):
            def run(verify: bool) -> float:
                get = db.get
                started = time.perf_counter()
                for key in keys:
                    get(key, verify_checksums=verify, fill_cache=fill_cache)
                return time.perf_counter() - started

            return run

        cold = best_of(args.passes, reads(False))
        warm = best_of(args.passes, reads(True))

        texts = [corpus.reprint(stored[rng.randrange(len(stored))], rng) for _ in range(args.batch)]
        texts += fillers.chunk(args.documents, args.documents + args.batch)
        prints = [detector.fingerprint(text) for text in texts]

        def checks(verify: bool) -> float:
            leveldb._VERIFY = verify
            check = detector.check_fingerprint
            started = time.perf_counter()
            verdicts = [check(f"b{number}", fp) for number, fp in enumerate(prints)]
            seconds = time.perf_counter() - started
            for verdict in verdicts:
                if verdict.stored:
                    store.remove(verdict.doc_id)
            return seconds

        batch = best_of(args.passes, checks)
        leveldb._VERIFY = True
        store.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"{args.documents:,} documents, load {'{:.1f}/{:.1f}'.format(*os.getloadavg()[:2])}")
    for name, found, count in (
        ("record read, block cache bypassed", cold, args.reads),
        ("record read, block cache warm", warm, args.reads),
        (f"check_fingerprint, {len(prints):,} (half reprints)", batch, len(prints)),
    ):
        off, on = (1e6 * found[verify] / count for verify in (False, True))
        print(f"{name}: {off:.2f} us without, {on:.2f} us with verification ({100 * (on / off - 1):+.1f}%)")


if __name__ == "__main__":
    main()
