"""Crawl rate of three Scrapy processes sharing scrapy-redis's queue, with and without
NearDupPipeline on one shared Redis store.

    python benchmarks/distributed_crawl.py [--processes 3] [--rounds 2] [--delay 0.3] [--concurrency 8]

The world is crawl_rate.py's: several thousand article pages built from People's Daily (January
1998) with ``scrapy_neardup.newsworld``, served from a separate process. A redis-server
(from PATH) holds the queue and the store. Each round runs the example's ``run_distributed.py``
machinery twice, without and with the pipeline (drop mode, HTML extraction on), in alternating
order. ``--delay`` imitates remote sites (seconds per page, default 0.3); ``--delay 0`` makes the
crawl CPU-bound on this machine, a diagnostic. Reported per run: pages, seconds from the start
to the first and the last page served (pages/s, over the whole crawl and from the first page
on, which leaves out the start-up) and to the last process exiting (each idles
MAX_IDLE_TIME_BEFORE_CLOSE = 5 s on an empty queue), pages per process, CPU of all crawler
processes and their workers; stories kept once, twice or lost; and the rate ratio (floor 0.85).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "example_project"
sys.path.insert(0, str(EXAMPLE))
sys.path.insert(0, str(REPO / "benchmarks"))

from crawl_rate import DEFAULT_DATA, corpus_stories, truth  # noqa: E402
from run_distributed import clear_redis, push_start_pages, read_folder, start_crawl  # noqa: E402

FLOOR = 0.85


def _serve_forever(world: Any, conn: Any, delay: float, served: Any) -> None:
    """Body of the server process: the news world, noting when it first and last answered a
    page (``served[0]``, ``served[1]``; the first is set back to 0 between crawls)."""
    import threading
    from http.server import ThreadingHTTPServer

    from scrapy_neardup.newsworld.server import make_handler

    class Timed(make_handler(world, delay)):  # type: ignore[misc, valid-type]
        def do_GET(self) -> None:
            super().do_GET()
            now = time.time()
            with served.get_lock():
                if not served[0]:
                    served[0] = now
                served[1] = now

    server = ThreadingHTTPServer(("127.0.0.1", 0), Timed)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    conn.send(f"http://127.0.0.1:{server.server_address[1]}/")
    conn.close()
    while True:
        time.sleep(3600)


def start_server(world: Any, delay: float) -> tuple[Any, str, Any]:
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe()
    served = context.Array("d", 2)
    process = context.Process(target=_serve_forever, args=(world, child, delay, served), daemon=True)
    process.start()
    if not parent.poll(60):
        process.terminate()
        raise RuntimeError("the news world server did not start")
    return process, parent.recv(), served


def start_redis(workdir: str) -> tuple[Any, str]:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
            "--logfile",
            os.path.join(workdir, "redis.log"),
        ]
    )
    url = f"redis://127.0.0.1:{port}/0"
    import redis

    for _ in range(200):
        try:
            redis.Redis.from_url(url).ping()
            return process, url
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def run(world: Any, base_url: str, served: Any, redis_url: str, neardup: bool, args: Any, tmp: str) -> dict:
    clear_redis(redis_url, "bench")
    push_start_pages(redis_url, [base_url] + [base_url.rstrip("/") + path for path in world.start_paths])
    where = str(args.logs) if args.logs else tmp
    folders = [os.path.join(where, f"{'with' if neardup else 'without'}-{n}") for n in range(1, args.processes + 1)]
    # the run's own Redis, started without persistence
    settings = [f"CONCURRENT_REQUESTS={args.concurrency}", "NEARDUP_REDIS_ALLOW_NO_PERSISTENCE=True"]
    if neardup and args.workers is not None:
        settings.append(f"NEARDUP_WORKERS={args.workers}")
    if neardup:
        settings += args.set
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    served[0] = 0.0
    started = time.time()
    processes = [start_crawl(f, base_url, redis_url, "bench", neardup, "INFO", *settings) for f in folders]
    codes = [process.wait() for process in processes]
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    kept: list[str] = []
    pages = []
    reasons = []
    for folder in folders:
        items, stats = read_folder(folder)
        kept += [item["url"] for item in items]
        pages.append(int(stats.get("response_received_count", 0)) - int(stats.get("robotstxt/response_count", 0)))
        reasons.append(stats.get("finish_reason"))
    if not served[0]:
        raise RuntimeError(
            f"no page was served: the crawl processes exited with {codes}; give --logs FOLDER to keep their logs"
        )
    to_last_page = served[1] - started
    return {
        "neardup": neardup,
        "codes": codes,
        "reasons": reasons,
        "pages": sum(pages),
        "per_process": pages,
        "to_last_page": to_last_page,
        "to_exit": ended - started,
        "rate": sum(pages) / to_last_page,
        "to_first_page": served[0] - started,
        "steady_rate": sum(pages) / (served[1] - served[0]),
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "kept": len(kept),
        "kept_urls_twice": len(kept) - len(set(kept)),
        "truth": truth(world, kept),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="pd199801_dev.jsonl.gz (default: %(default)s)")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2, help="rounds of (without, with) in alternating order")
    parser.add_argument("--delay", type=float, default=0.3, help="seconds the server waits before each page")
    parser.add_argument("--concurrency", type=int, default=8, help="CONCURRENT_REQUESTS of each process (default 8)")
    parser.add_argument("--workers", type=int, help="NEARDUP_WORKERS (default: the pipeline's default)")
    parser.add_argument(
        "-s",
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another setting for the crawls with the pipeline (repeatable)",
    )
    parser.add_argument("--stories", type=int, help="use only the first N stories (a quick run)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logs", type=Path, help="keep each process's crawl.log, feed and stats in this folder")
    args = parser.parse_args(argv)
    if shutil.which("redis-server") is None:
        parser.error("redis-server is not on the PATH")
    try:
        import scrapy_redis  # noqa: F401
    except ImportError:
        parser.error('scrapy-redis is not installed: pip install "scrapy-neardup[distributed]"')
    if not args.data.exists():
        parser.error(f"corpus not found: {args.data} (give --data)")

    from scrapy_neardup.newsworld import build_world

    stories = corpus_stories(args.data, seed=args.seed)
    if args.stories:
        stories = stories[: args.stories]
    world = build_world(stories=stories, seed=args.seed, reprints=(3, 4), per_page=20)
    print(
        f"news world: {len(stories)} stories -> {len(world.story_of)} article pages, {len(world.pages)} pages; "
        f"{args.processes} processes, CONCURRENT_REQUESTS {args.concurrency}, server delay {args.delay} s",
        flush=True,
    )
    server, base_url, last_served = start_server(world, args.delay)
    results: dict[bool, list[dict]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="distributed-crawl-") as tmp:
        redis_process, redis_url = start_redis(tmp)
        try:
            for round_ in range(args.rounds):
                for neardup in (False, True) if round_ % 2 == 0 else (True, False):
                    result = run(world, base_url, last_served, redis_url, neardup, args, tmp)
                    results[neardup].append(result)
                    t = result["truth"]
                    print(
                        f"round {round_ + 1} {'with' if neardup else 'without'} pipeline: {result['pages']} pages "
                        f"(per process {result['per_process']}), first page after {result['to_first_page']:.1f} s, "
                        f"last after {result['to_last_page']:.1f} s ({result['rate']:.1f} pages/s; "
                        f"{result['steady_rate']:.1f} from the first page on), {result['to_exit']:.1f} s to exit, cpu {result['cpu']:.1f} s; "
                        f"kept {result['kept']}: stories once {t['kept_once']}/{t['stories']}, twice or more "
                        f"{t['kept_twice_or_more']}, lost {t['lost']}; exit codes {result['codes']} {result['reasons']}",
                        flush=True,
                    )
        finally:
            redis_process.terminate()
            redis_process.wait()
            server.terminate()
    ratios = [w["rate"] / wo["rate"] for w, wo in zip(results[True], results[False])]
    without = statistics.median(r["rate"] for r in results[False])
    with_ = statistics.median(r["rate"] for r in results[True])
    print(
        f"\nmedian pages/s: without {without:.1f}, with {with_:.1f}; ratio {with_ / without:.2f} "
        f"(rounds {', '.join(f'{r:.2f}' for r in ratios)}; floor {FLOOR})"
    )
    steady = [w["steady_rate"] / wo["steady_rate"] for w, wo in zip(results[True], results[False])]
    print(
        f"from the first page served on: ratio {statistics.median(steady):.2f} "
        f"(rounds {', '.join(f'{r:.2f}' for r in steady)}); start-up to the first page: without "
        f"{statistics.median(r['to_first_page'] for r in results[False]):.1f} s, with "
        f"{statistics.median(r['to_first_page'] for r in results[True]):.1f} s"
    )
    twice = sum(r["truth"]["kept_twice_or_more"] for r in results[True])
    lost = sum(r["truth"]["lost"] for r in results[True])
    print(f"with the pipeline, over {len(results[True])} runs: stories kept twice or more {twice}, lost {lost}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
