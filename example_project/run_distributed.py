"""Serve the news world, crawl it with several Scrapy processes sharing scrapy-redis's queue
and one Redis neardup store, and check the result against the truth.

    cd example_project && python run_distributed.py --redis-url redis://127.0.0.1:6379/0
    python run_distributed.py --redis-url redis://127.0.0.1:6379/0 --store redis+cluster://127.0.0.1:7000/

Needs a Redis server and scrapy-redis (``pip install -e ".[distributed]"`` from the repository
root). The neardup store is that Redis too, or ``--store`` another (a Redis Cluster, say: only
the URI changes; scrapy-redis's queue stays on the Redis of ``--redis-url``). Each process runs
``scrapy crawl news_distributed`` with ``example.settings_distributed`` and writes its own feed (``output/distributed/<n>/articles.jsonl``). Exit status 0 when, over all
processes together, every story was kept exactly once and no page was fetched twice; 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from typing import Any

from run_example import check_dropped

HERE = os.path.dirname(os.path.abspath(__file__))
SPIDER = "news_distributed"
NAMESPACE = "distributed"
SUMMED = (
    "response_received_count",
    "robotstxt/response_count",
    "item_scraped_count",
    "neardup/items",
    "neardup/dropped",
    "neardup/unique",
)


def clear_redis(redis_url: str, namespace: str, store: str | None = None) -> None:
    """Start afresh: remove the spider's queue, seen-requests filter and start pages, and the
    neardup namespace's documents (on ``store`` when it is another Redis or a Redis Cluster)."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        patterns = [f"{SPIDER}:*"] + ([] if store and store != redis_url else [f"neardup:{{{namespace}}}:*"])
        for pattern in patterns:
            keys = list(client.scan_iter(match=pattern, count=1000))
            for start in range(0, len(keys), 1000):
                client.delete(*keys[start : start + 1000])
    finally:
        client.close()
    if store and store != redis_url:
        clear_store(store, namespace)


def clear_store(store: str, namespace: str) -> None:
    """Remove a neardup namespace from a Redis or Redis Cluster store (every master's keys:
    ``neardup:{namespace}:*``, and on a cluster ``neardup:{<slot tag>}:<namespace>:*``)."""
    from scrapy_neardup.stores.redis.store import get_redis

    client = get_redis(store)
    try:
        for pattern in (f"neardup:{{{namespace}}}:*", f"neardup:{{*}}:{namespace}:*"):
            for key in list(client.scan_iter(match=pattern, count=1000)):
                client.delete(key)
    finally:
        client.close()


def push_start_pages(redis_url: str, urls: list[str]) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        client.rpush(f"{SPIDER}:start_urls", *(json.dumps({"url": url}) for url in urls))
    finally:
        client.close()


def start_crawl(
    folder: str,
    base_url: str,
    redis_url: str,
    namespace: str,
    neardup: bool,
    log_level: str,
    *settings: str,
    store: str | None = None,
) -> Any:
    """One ``scrapy crawl`` process writing its feed, stats and log to ``folder``; ``settings``
    are more ``NAME=VALUE`` settings; ``store`` is the neardup store (default: ``redis_url``)."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        SPIDER,
        "-a",
        f"base_url={base_url}",
        "-O",
        os.path.join(folder, "articles.jsonl"),
        "-s",
        f"STATS_FILE={os.path.join(folder, 'stats.json')}",
        "-s",
        f"ARTICLE_STORE_DIR={folder}",
        "-s",
        f"REDIS_URL={redis_url}",
        "-s",
        f"NEARDUP_STORE={store or redis_url}",
        "-s",
        f"NEARDUP_NAMESPACE={namespace}",
        "-s",
        f"NEARDUP_ENABLED={int(neardup)}",
        "-s",
        f"LOG_LEVEL={log_level}",
    ]
    for setting in settings:
        command += ["-s", setting]
    env = dict(os.environ, SCRAPY_SETTINGS_MODULE="example.settings_distributed")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [HERE, env.get("PYTHONPATH")]))
    log = open(os.path.join(folder, "crawl.log"), "w", encoding="utf-8")  # noqa: SIM115 - the process writes it
    return subprocess.Popen(command, cwd=HERE, env=env, stdout=log, stderr=subprocess.STDOUT)


def read_folder(folder: str) -> tuple[list[dict], dict]:
    feed = os.path.join(folder, "articles.jsonl")
    stats_file = os.path.join(folder, "stats.json")
    items = []
    if os.path.exists(feed):
        with open(feed, encoding="utf-8") as handle:
            items = [json.loads(line) for line in handle if line.strip()]
    stats = {}
    if os.path.exists(stats_file):
        with open(stats_file, encoding="utf-8") as handle:
            stats = json.load(handle)
    return items, stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--redis-url", default="redis://127.0.0.1:6379/0", help="the Redis for the queue (and the store)"
    )
    parser.add_argument(
        "--store", help="the neardup store, when not the queue's Redis (redis+cluster://host:port/ ...)"
    )
    parser.add_argument("--processes", type=int, default=3, help="scrapy crawl processes (default 3)")
    parser.add_argument("--namespace", default=NAMESPACE, help=f"NEARDUP_NAMESPACE (default {NAMESPACE!r})")
    parser.add_argument("--no-neardup", action="store_true", help="crawl without the pipeline (every article kept)")
    parser.add_argument("--keep-store", action="store_true", help="keep the namespace's documents of earlier runs")
    parser.add_argument("--seed", type=int, default=0, help="seed of the news world")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds the server waits before each page")
    parser.add_argument("--log-level", default="INFO", help="Scrapy LOG_LEVEL of each process (its crawl.log)")
    parser.add_argument(
        "--max-idle",
        type=int,
        help="seconds a process waits with the queue empty before it closes (MAX_IDLE_TIME_BEFORE_CLOSE, default 5; 0 never)",
    )
    args = parser.parse_args(argv)

    os.chdir(HERE)
    sys.path.insert(0, HERE)
    from scrapy_neardup.newsworld import build_world, serve

    if not args.keep_store:
        clear_redis(args.redis_url, args.namespace, args.store)
    world = build_world(seed=args.seed)
    server, base_url = serve(world, delay=args.delay)
    print(f"news world at {base_url}: {len(world.pages)} pages on {len(world.start_paths)} sites", flush=True)
    push_start_pages(args.redis_url, [base_url] + [base_url.rstrip("/") + path for path in world.start_paths])
    started = time.monotonic()
    try:
        folders = [os.path.join("output", "distributed", str(n)) for n in range(1, args.processes + 1)]
        idle = [f"MAX_IDLE_TIME_BEFORE_CLOSE={args.max_idle}"] if args.max_idle is not None else []
        crawls = [
            start_crawl(
                folder,
                base_url,
                args.redis_url,
                args.namespace,
                not args.no_neardup,
                args.log_level,
                *idle,
                store=args.store,
            )
            for folder in folders
        ]
        codes = [process.wait() for process in crawls]
    finally:
        server.shutdown()
        server.server_close()
    seconds = time.monotonic() - started

    kept: list[dict] = []
    total: dict[str, int] = {}
    ok = True
    for folder, code in zip(folders, codes):
        items, stats = read_folder(folder)
        kept.extend(items)
        for name in SUMMED:
            total[name] = total.get(name, 0) + int(stats.get(name, 0))
        reason = stats.get("finish_reason")
        print(
            f"process {folder}: exit {code}, finish_reason {reason}, pages {stats.get('response_received_count', 0)}, "
            f"items {stats.get('item_scraped_count', 0)} kept, {stats.get('neardup/dropped', 0)} dropped"
        )
        ok = ok and code == 0 and reason == "finished"
    pages = total["response_received_count"] - total["robotstxt/response_count"]
    expected = len(set(world.pages) - {"/robots.txt"})
    print(f"\n{args.processes} processes, {seconds:.1f} s, {pages} pages fetched of the world's {expected}")
    if pages != expected:
        print(f"pages fetched twice or missed: {pages - expected:+d}")
        ok = False
    if args.no_neardup:
        urls = [item["url"] for item in kept]
        twice = len(urls) - len(set(urls))
        passed = twice == 0 and len(set(urls)) == len(world.story_of)
        lines = [f"articles kept {len(urls)} of {len(world.story_of)}, kept twice {twice} (no pipeline: all kept)"]
    else:
        passed, lines = check_dropped(world, kept, total)
        if args.keep_store:
            lines = lines[:1] + [
                "--keep-store: the namespace still holds the stories of earlier runs; no ground-truth check"
            ]
            passed = True
    for line in lines:
        print(line)
    ok = ok and passed
    print("result:", "OK" if ok else "NOT AS EXPECTED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
