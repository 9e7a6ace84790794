"""End-to-end accuracy on a news world: every article page as the pipeline sees it.

    python benchmarks/world_accuracy.py --world real     # the world in real page templates
    python benchmarks/world_accuracy.py --world hand     # the hand-built world of crawl_rate.py
    python benchmarks/accuracy.py --world real           # the same, from the accuracy benchmark

The article pages, in the order they were published, go through what a crawl's worker does
(``fingerprints.prepare.Preparer``: extraction with readability-lxml, the article rules of
``scrapy_neardup.fingerprints.article``, the fingerprint) and then ``Detector.check_fingerprint`` on a
memory store, keyed by URL as the pipeline keys them. A page is a duplicate when an earlier
page of its story exists. Printed: precision and recall of the duplicates dropped, pages
passed as not articles, too short or without text, and every false duplicate with its site
(a false duplicate drops a unique article). Floors: precision 0.999, recall 0.98.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_templates import DEFAULT_DATA, real_world

FLOOR_PRECISION = 0.999
FLOOR_RECALL = 0.98
BASE_URL = "http://127.0.0.1:8000"


def hand_world(data: Path, seed: int = 0) -> Any:
    from crawl_rate import corpus_stories

    from scrapy_neardup.newsworld import build_world

    stories = corpus_stories(data / "zh-pd199801" / "pd199801_dev.jsonl.gz", seed=seed)
    return build_world(stories=stories, seed=seed, reprints=(3, 4), per_page=20)


def judge_world(world: Any) -> dict:
    from scrapy_neardup import Detector, Recipe, open_store
    from scrapy_neardup.fingerprints.article import site_of
    from scrapy_neardup.fingerprints.extract import DEFAULT_EXTRACTOR
    from scrapy_neardup.fingerprints.prepare import OK, Preparer

    recipe = Recipe().resolved()
    preparer = Preparer(recipe, DEFAULT_EXTRACTOR)
    detector = Detector(open_store("memory://", recipe=recipe))
    order = sorted(world.story_of, key=lambda path: (world.published[path], path))
    seen: set[str] = set()
    counts: Counter = Counter()
    false_dups: list[str] = []
    started = time.process_time()
    for path in order:
        story = world.story_of[path]
        duplicate = story in seen
        seen.add(story)
        key = BASE_URL + path
        prepared = preparer(world.body(path), True, key, site_of(key))
        if prepared.status != OK:
            counts[f"passed: {prepared.status} {prepared.error or ''}".strip()] += 1
            verdict_dup = False
        else:
            verdict = detector.check_fingerprint(key, prepared.fingerprint)
            verdict_dup = verdict.is_duplicate
            if verdict.status not in ("unique", "duplicate"):
                counts[f"passed: {verdict.status}"] += 1
            if verdict_dup and not duplicate:
                other = verdict.duplicate_of.removeprefix(BASE_URL)
                false_dups.append(f"{world.site_of[path]} {path} taken for {world.site_of.get(other, '?')} {other}")
        counts["tp" if verdict_dup and duplicate else "fp" if verdict_dup else "fn" if duplicate else "tn"] += 1
    seconds = time.process_time() - started
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    return {
        "pages": len(order),
        "stories": len(seen),
        "duplicates": tp + fn,
        "seconds": seconds,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "counts": counts,
        "false_duplicates": false_dups,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--world", choices=("real", "hand"), default="real")
    parser.add_argument("--stories", type=int, default=300, help="stories of the real-template world")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    world = (
        real_world(args.data, args.stories, seed=args.seed)
        if args.world == "real"
        else hand_world(args.data, args.seed)
    )
    result = judge_world(world)
    print(
        f"{args.world} world: {result['pages']} article pages, {result['stories']} stories, "
        f"{result['duplicates']} duplicates; {1000 * result['seconds'] / result['pages']:.1f} ms CPU a page"
    )
    print(
        f"precision {result['precision']:.4f} (floor {FLOOR_PRECISION}), recall {result['recall']:.4f} "
        f"(floor {FLOOR_RECALL}); " + ", ".join(f"{k} {v}" for k, v in sorted(result["counts"].items()))
    )
    for line in result["false_duplicates"]:
        print(f"  false duplicate: {line}")
    ok = result["precision"] >= FLOOR_PRECISION and result["recall"] >= FLOOR_RECALL
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
