"""Serve the news world on a free port, crawl it, and check the result against the truth.

    cd example_project && python run_example.py

Runs the ``news`` spider (reprints dropped) and the ``news_tagged`` spider (reprints tagged)
in one CrawlerProcess: they share the LevelDB store in ``.scrapy/neardup`` under different
namespaces. A portal of the world posts excerpts of some stories before their source sites
publish them; the project keeps the complete article (``NEARDUP_PREFER = "longest"``), whose
item names the excerpt in ``replaces``, and the storage pipeline deletes the excerpt's row.
Exit status 0 when every story was kept exactly once, as its complete article where an excerpt
came first, and no article was called a reprint of a different story; 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from typing import Any
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
SPIDERS = ("news", "news_tagged")
EXCERPT_EVERY = 3  # every third story of the world is posted first as a portal's excerpt


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _read_feed(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def replaced(items: list[dict]) -> set[str]:
    """Urls that a later item of the feed replaced (its ``replaces``): no longer kept."""
    return {item["replaces"] for item in items if item.get("replaces")}


def excerpts(world: Any) -> set[str]:
    """The portal's excerpt pages."""
    return {path for path, site in world.site_of.items() if site == "kx"}


def check_dropped(world: Any, kept: list[dict], stats: dict) -> tuple[bool, list[str]]:
    """Drop mode: the feed, less the rows that later items replaced, should hold exactly one
    copy of every story, and no excerpt."""
    gone = replaced(kept)
    passed = len(kept)
    kept = [item for item in kept if item["url"] not in gone]
    left = sorted(_path(item["url"]) for item in kept if _path(item["url"]) in excerpts(world))
    copies = world.copies()
    kept_by_story: dict[str, list[str]] = {}
    for item in kept:
        story = world.story_of.get(_path(item["url"]), "?")
        kept_by_story.setdefault(story, []).append(item["title"])
    once = [s for s in copies if len(kept_by_story.get(s, [])) == 1]
    twice = {s: t for s, t in kept_by_story.items() if len(t) > 1}
    lost = [s for s in copies if s not in kept_by_story]
    lost_unique = [s for s in lost if len(copies[s]) == 1]
    lines = [
        f"pages crawled {stats.get('response_received_count', 0)}, "
        f"articles {stats.get('neardup/items', 0)}, kept {len(kept)}, "
        f"reprints dropped {stats.get('neardup/dropped', 0)}",
        f"copies replaced by a more complete one: {len(gone)} ({passed} items passed, their rows "
        f"deleted); excerpts still kept: {len(left)}" + (f": {', '.join(left)}" if left else ""),
        f"ground truth: {len(copies)} stories in {len(world.story_of)} article pages "
        f"({sum(len(c) == 1 for c in copies.values())} never reprinted)",
        f"stored once: {len(once)}/{len(copies)} stories"
        + (" - every story exactly once" if len(once) == len(copies) else ""),
        f"stories lost (all copies dropped): {len(lost)} ({len(lost_unique)} of them unique articles)"
        + (f": {', '.join(lost)}" if lost else ""),
        f"stories stored more than once (reprints missed): {len(twice)}" + (f": {', '.join(twice)}" if twice else ""),
    ]
    for story in sorted(kept_by_story):
        dropped = len(copies.get(story, [])) - len(kept_by_story[story])
        lines.append(f"  {story}  {kept_by_story[story][0]}  (reprints dropped: {dropped})")
    return not lost and not twice and not left, lines


def check_tagged(world: Any, items: list[dict], stats: dict) -> tuple[bool, list[str]]:
    """Tag mode: every copy kept; a tagged copy must point at a copy of the same story, and
    each story has one untagged copy that no later copy replaced."""
    gone = replaced(items)
    firsts: dict[str, int] = {}
    right = wrong = 0
    groups: dict[Any, set[str]] = {}
    for item in items:
        story = world.story_of.get(_path(item["url"]), "?")
        if item.get("similar_id") is not None:
            groups.setdefault(item["similar_id"], set()).add(story)
        if item.get("duplicate_of"):
            if world.story_of.get(_path(item["duplicate_of"])) == story:
                right += 1
            else:
                wrong += 1
        elif item["url"] not in gone:
            firsts[story] = firsts.get(story, 0) + 1
    copies = world.copies()
    once = sum(firsts.get(s, 0) == 1 for s in copies)
    mixed = sum(len(stories) > 1 for stories in groups.values())
    lines = [
        f"pages crawled {stats.get('response_received_count', 0)}, articles {len(items)}, "
        f"tagged as reprints {right + wrong} ({right} of the same story, {wrong} of another story)",
        f"first copies: {once}/{len(copies)} stories have exactly one untagged copy; "
        f"similar_id groups mixing stories: {mixed}",
    ]
    return wrong == 0 and once == len(copies) and len(items) == len(world.story_of), lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spider", choices=(*SPIDERS, "both"), default="both")
    parser.add_argument(
        "--keep-store",
        action="store_true",
        help="keep the documents of earlier runs (their reprints are then dropped too)",
    )
    parser.add_argument("--store", help="NEARDUP_STORE URI (default: LevelDB in .scrapy/neardup)")
    parser.add_argument("--workers", type=int, help="NEARDUP_WORKERS (worker processes for extraction)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the news world")
    parser.add_argument(
        "--excerpts",
        type=int,
        default=EXCERPT_EVERY,
        help="every n-th story is posted first as a portal's excerpt (0: none)",
    )
    parser.add_argument("--log-level", default="WARNING", help="Scrapy LOG_LEVEL (default WARNING)")
    args = parser.parse_args(argv)

    os.chdir(HERE)
    sys.path.insert(0, HERE)
    os.environ["SCRAPY_SETTINGS_MODULE"] = "example.settings"
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import data_path, get_project_settings

    from scrapy_neardup.newsworld import build_world, serve
    from scrapy_neardup.stores import receipts

    settings = get_project_settings()
    settings.set("LOG_LEVEL", args.log_level, priority="cmdline")
    if args.store:
        settings.set("NEARDUP_STORE", args.store, priority="cmdline")
    if args.workers is not None:
        settings.set("NEARDUP_WORKERS", args.workers, priority="cmdline")
    if not args.keep_store and not settings.get("NEARDUP_STORE"):
        folder = data_path("neardup")  # this example's own default store, started anew each run
        shutil.rmtree(folder, ignore_errors=True)
        receipts.forget(f"leveldb://{os.path.abspath(folder)}")  # emptied on purpose: nothing lost

    world = build_world(seed=args.seed, excerpt_every=args.excerpts)
    server, base_url = serve(world)
    print(f"news world at {base_url}: {len(world.pages)} pages on {len(world.start_paths)} sites", flush=True)
    names = SPIDERS if args.spider == "both" else (args.spider,)
    try:
        process = CrawlerProcess(settings)
        crawlers = {}
        for name in names:
            crawlers[name] = process.create_crawler(name)
            process.crawl(crawlers[name], base_url=base_url)
        process.start()
    finally:
        server.shutdown()
        server.server_close()

    ok = True
    for name, crawler in crawlers.items():
        stats = crawler.stats.get_stats()
        reason = stats.get("finish_reason")
        feed = next(iter(crawler.settings.getdict("FEEDS")))
        items = _read_feed(feed)
        check = check_dropped if crawler.settings.get("NEARDUP_ACTION") == "drop" else check_tagged
        passed, lines = check(world, items, stats)
        print(
            f"\n== spider {name} (NEARDUP_ACTION={crawler.settings.get('NEARDUP_ACTION')}, "
            f"namespace {crawler.settings.get('NEARDUP_NAMESPACE')!r}): {feed} =="
        )
        if args.keep_store:
            lines = lines[:1] + [
                "--keep-store: the store still holds the documents of earlier runs, so the stories seen "
                "then are dropped (or tagged) as reprints of those; no ground-truth check"
            ]
            passed = True
        if reason != "finished":
            print(f"crawl did not finish normally: finish_reason={reason!r}")
            passed = False
        for line in lines:
            print(line)
        print("result:", "OK" if passed else "NOT AS EXPECTED")
        ok = ok and passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
