"""Crawl rate with and without NearDupPipeline, on a generated local news world.

    python benchmarks/crawl_rate.py [--data PATH] [--workers 0 1] [--store-thread off on] [--repeat 3] [--json out.json]
                                    [-s NAME=VALUE ...] [--variant 'NAME=VALUE ...'] [--base DIR]
                                    [--world real] [--stories N] [--delay SECONDS] [--addon]

The world is built with ``scrapy_neardup.newsworld`` from real Chinese news (People's
Daily, January 1998: consecutive short articles joined to news length), five sites with their
own templates, each story published once and reprinted on 3-4 other sites: several thousand
article pages. It is served by a separate process (so the server does not share the
crawler's GIL), and crawled by Scrapy (CONCURRENT_REQUESTS 16) in a fresh process per run:

- without the pipeline: the spider yields url + title + html items, nothing else happens;
- with NearDupPipeline: the same items (html only, no text field, so every page goes through
  readability-lxml), drop mode, a LevelDB store in a temporary directory.

Reported: pages/s of each run and their ratio (floor 0.85), items kept and dropped, the
``neardup/`` stats, and how the kept items compare with the world's ground truth; the time to
the first item, from the moment the crawl is asked for (``CrawlerProcess.crawl``, where Scrapy
builds its engine and the pipeline starts its workers), against the crawl without the pipeline
(floor +0.5 s). ``--base DIR`` adds, in every round, a crawl with the pipeline of another
source tree (its C kernel built in place): two versions measured in one run; ``--addon`` adds
a crawl with the pipeline enabled by the add-on. The crawls run with bytecode written and
read, as an installed package has it, whatever the environment says: one crawl of each
configuration, not counted, writes it (and the tables' cache) first.

``--neighbour-duty 0.45`` adds a diagnostic run: the crawl without the pipeline while another
process extracts pages with readability-lxml 45% of the time, as a worker does, and hands
nothing to the crawler. Its rate shows what a busy second core alone costs the crawler.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "example_project"
DEFAULT_DATA = REPO.parent / "shared" / "data" / "zh-pd199801" / "pd199801_dev.jsonl.gz"
FLOOR = 0.85
FIRST_ITEM_FLOOR = 0.5  # seconds the pipeline may add to the time to the first item

sys.path.insert(0, str(EXAMPLE))
sys.path.insert(0, str(Path(__file__).resolve().parent))


# -- the world -----------------------------------------------------------------------------


def corpus_stories(path: Path, min_chars: int = 1000, max_chars: int = 1500, seed: int = 0) -> list[Any]:
    """Cut the corpus into news-length stories, in corpus order, at paragraph boundaries.

    The corpus median is about 470 characters: consecutive short articles are joined, and
    long ones split, so that each story reaches a target length drawn between ``min_chars``
    and ``max_chars``.
    """
    from scrapy_neardup.newsworld import Story

    rng = random.Random(seed)
    stories: list[Story] = []
    title, story_id, paragraphs, chars = "", "", [], 0
    target = rng.randint(min_chars, max_chars)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            lines = [p.strip() for p in record["text"].split("\n") if p.strip()]
            for number, paragraph in enumerate(lines):
                if not paragraphs:
                    title = record["title"].strip() or paragraph[:20]
                    story_id = f"{record['id']}.{number}"
                paragraphs.append(paragraph)
                chars += len(paragraph)
                if chars >= target:
                    stories.append(Story(story_id, title, tuple(paragraphs)))
                    paragraphs, chars = [], 0
                    target = rng.randint(min_chars, max_chars)
    if chars >= min_chars // 2:
        stories.append(Story(story_id, title, tuple(paragraphs)))
    return stories


def _serve_forever(world: Any, conn: Any, delay: float) -> None:
    """Body of the server process (forked, so the world is not pickled)."""
    from scrapy_neardup.newsworld import serve

    _server, base_url = serve(world, delay=delay)
    conn.send(base_url)
    conn.close()
    while True:
        time.sleep(3600)


def start_server(world: Any, delay: float = 0.0) -> tuple[Any, str]:
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe()
    process = context.Process(target=_serve_forever, args=(world, child, delay), daemon=True, name="newsworld-server")
    process.start()
    if not parent.poll(60):
        process.terminate()
        raise RuntimeError("the news world server did not start")
    return process, parent.recv()


# -- a neighbour: readability on the other core, without the pipeline ---------------------


def neighbour(config: dict) -> None:
    """Extract article pages with readability-lxml at ``duty`` (share of the time busy), for
    ever: what a worker does to the machine, without anything reaching the crawler process."""
    from urllib.request import urlopen

    from scrapy_neardup.fingerprints.extract import decode_html, html_to_text

    pages = []
    for path in config["paths"]:
        with urlopen(config["base_url"].rstrip("/") + path) as response:
            pages.append(decode_html(response.read(), content_type=response.headers.get("Content-Type")))
    idle = (1.0 - config["duty"]) / config["duty"]
    for index in range(10**9):
        started = time.perf_counter()
        html_to_text(pages[index % len(pages)])
        time.sleep((time.perf_counter() - started) * idle)


# -- one crawl, in its own process -------------------------------------------------------


def crawl_child(config: dict) -> None:
    """Run one crawl and write its figures to ``config["result"]`` as JSON."""
    from example.spiders.news import NewsSpider
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    settings: dict[str, Any] = {
        "CONCURRENT_REQUESTS": config["concurrency"],
        "CONCURRENT_REQUESTS_PER_DOMAIN": config["concurrency"],  # one host: the default 8 would cap it
        "LOG_LEVEL": config["log_level"],
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "ITEM_PIPELINES": {},
    }
    if config.get("first_item_only"):  # the crawl closes once its first item is kept
        settings["CLOSESPIDER_ITEMCOUNT"] = 1
    if config["pipeline"]:
        if config.get("addon"):  # the add-on puts the pipeline in ITEM_PIPELINES (at 200)
            settings["ADDONS"] = {"scrapy_neardup.Addon": 0}
        else:
            settings["ITEM_PIPELINES"] = {"scrapy_neardup.NearDupPipeline": 300}
        settings.update(
            NEARDUP_STORE=config["store"],
            NEARDUP_ACTION="drop",
            NEARDUP_HTML_FIELD="html",
            NEARDUP_TEXT_FIELD="text",  # absent from these items: extraction from html
        )
        if config["workers"] is not None:
            settings["NEARDUP_WORKERS"] = config["workers"]
        if config.get("store_thread") in ("on", "off"):
            settings["NEARDUP_STORE_THREAD"] = config["store_thread"] == "on"
        settings.update(config.get("extra") or {})
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(NewsSpider)
    kept: list[str] = []
    first_item: list[float] = []

    def on_item(item: Any, **kwargs: Any) -> None:
        if not first_item:
            first_item.append(time.perf_counter())
        if "exception" not in kwargs:  # item_scraped: kept
            kept.append(item["url"])

    crawler.signals.connect(on_item, signal=signals.item_scraped)
    crawler.signals.connect(on_item, signal=signals.item_dropped)  # the first item judged, kept or not
    beside = None
    if config.get("neighbour"):
        beside = subprocess.Popen([sys.executable, __file__, "--neighbour", json.dumps(config["neighbour"])])
        time.sleep(3)  # it fetches its pages and starts extracting
    # The clock starts when the crawl is asked for: Scrapy builds its engine (and the pipeline
    # starts its workers) in process.crawl, the reactor runs the rest in process.start.
    started = time.perf_counter()
    process.crawl(crawler, base_url=config["base_url"])
    cpu_started = time.process_time()
    process.start()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if beside is not None:
        beside.kill()
        beside.wait()
    stats = crawler.stats.get_stats()
    elapsed = stats.get("elapsed_time_seconds")
    if elapsed is None:
        elapsed = (stats["finish_time"] - stats["start_time"]).total_seconds()
    result = {
        "pages": stats.get("response_received_count", 0),
        "elapsed": elapsed,
        "wall": wall,
        "crawl_cpu": cpu,  # CPU of the crawl process itself while crawling (no start-up, no workers)
        "items": stats.get("item_scraped_count", 0) + stats.get("item_dropped_count", 0),
        "first_item": first_item[0] - started if first_item else None,  # seconds from process.crawl
        "kept": kept,
        "dropped": stats.get("item_dropped_count", 0),
        "finish_reason": stats.get("finish_reason"),
        "neardup": {k: v for k, v in stats.items() if k.startswith("neardup/")},
    }
    with open(config["result"], "w", encoding="utf-8") as handle:
        json.dump(result, handle)


def process_cpu(pid: int) -> float | None:
    """CPU seconds used so far by process ``pid`` (Linux /proc), or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_crawl(config: dict, server_pid: int | None = None) -> dict:
    """One crawl in a fresh Python process; returns its figures plus the CPU it used."""
    with tempfile.TemporaryDirectory(prefix="crawl-rate-") as tmp:
        config = dict(config, result=os.path.join(tmp, "result.json"))
        if config["pipeline"]:
            config["store"] = f"leveldb://{os.path.join(tmp, 'store')}"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        server_before = process_cpu(server_pid) if server_pid else None
        completed = subprocess.run(
            [sys.executable, __file__, "--child", json.dumps(config)],
            capture_output=True,
            text=True,
            env=child_env(config.get("tree")),
            cwd=tmp,  # a worker imports from its folder first: not the tree the benchmark runs from
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        server_after = process_cpu(server_pid) if server_pid else None
        if completed.returncode != 0 or not os.path.exists(config["result"]):
            sys.stderr.write(completed.stderr[-5000:])
            raise RuntimeError(f"crawl failed (exit {completed.returncode})")
        if completed.stderr.strip():
            sys.stderr.write(completed.stderr[-3000:])
        with open(config["result"], encoding="utf-8") as handle:
            result = json.load(handle)
    result["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result["server_cpu"] = (
        server_after - server_before if server_before is not None and server_after is not None else None
    )
    result["rate"] = result["pages"] / result["elapsed"] if result["elapsed"] else 0.0
    return result


def child_env(tree: str | None = None) -> dict[str, str]:
    """The environment of a crawl's process (and so of its workers): with ``tree``, that
    source tree's scrapy_neardup is imported instead of the installed one. Bytecode is
    written and read as in an installed package, in a folder of the benchmark's own: an
    environment that says PYTHONDONTWRITEBYTECODE would have every worker compile the
    package's modules again, which a user's install does not."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), f"crawl-rate-pycache-{os.getuid()}")
    if tree:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(tree).resolve()), env.get("PYTHONPATH")]))
    return env


def truth(world: Any, kept: list[str]) -> dict:
    copies = world.copies()
    by_story: dict[str, int] = {}
    for url in kept:
        story = world.story_of.get(_path(url))
        by_story[story] = by_story.get(story, 0) + 1
    kept_paths = {_path(url) for url in kept}
    missed = [
        {
            "story": s,
            "kept": [
                {"path": p, "site": world.site_of[p], "edits": world.edits_of.get(p, ["original"])}
                for p in sorted(c)
                if p in kept_paths
            ],
        }
        for s, c in sorted(copies.items())
        if by_story.get(s, 0) > 1
    ]
    return {
        "stories": len(copies),
        "kept_once": sum(by_story.get(s) == 1 for s in copies),
        "lost": sum(s not in by_story for s in copies),
        "lost_unreprinted": sum(s not in by_story and len(c) == 1 for s, c in copies.items()),
        "kept_twice_or_more": len(missed),
        "missed": missed,  # stories kept more than once: which copies got through, and their edits
    }


def _settings(pairs: list[str]) -> dict[str, str]:
    """NAME=VALUE pairs as Scrapy settings (Scrapy parses the strings)."""
    settings = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"not NAME=VALUE: {pair!r}")
        settings[name] = value
    return settings


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


# -- main --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="pd199801_dev.jsonl.gz (default: %(default)s)")
    parser.add_argument(
        "--workers",
        type=int,
        nargs="*",
        default=[None],
        help="NEARDUP_WORKERS values to run with the pipeline (default: the pipeline's default)",
    )
    parser.add_argument(
        "--store-thread",
        nargs="*",
        choices=("auto", "on", "off"),
        default=["auto"],
        help="NEARDUP_STORE_THREAD values to run with the pipeline (auto: the default)",
    )
    parser.add_argument(
        "-s",
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for every crawl with the pipeline (repeatable)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="'NAME=VALUE ...'",
        help="another configuration of the pipeline run in each round, beside the default one",
    )
    parser.add_argument(
        "--base",
        metavar="DIR",
        help="also crawl with the pipeline of this source tree (its C kernel built in place), "
        "in each round: an A/B of two versions in one run",
    )
    parser.add_argument(
        "--addon",
        action="store_true",
        help="also crawl with the pipeline enabled by the add-on (ADDONS), in each round: it starts "
        "the workers as Scrapy builds its extensions, before the pipeline's from_crawler",
    )
    parser.add_argument(
        "--first-item-only",
        action="store_true",
        help="each crawl closes once it has kept its first item (CLOSESPIDER_ITEMCOUNT 1): many "
        "short rounds of the time to the first item (the rates and the ground truth mean nothing then)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs of each configuration; the median is reported")
    parser.add_argument("--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS (default 16)")
    parser.add_argument(
        "--reprints", type=int, nargs=2, default=(3, 4), metavar=("MIN", "MAX"), help="reprints per story (default 3 4)"
    )
    parser.add_argument("--stories", type=int, help="use only the first N stories (a quick run)")
    parser.add_argument(
        "--world",
        choices=("hand", "real"),
        default="hand",
        help="hand: the example project's five sites; real: stories in real page templates "
        "(real_templates.py, 300 stories unless --stories)",
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=0.0,
        help="seconds the server waits before each response, to imitate remote sites (default 0)",
    )
    parser.add_argument("--log-level", default="WARNING", choices=("INFO", "WARNING", "ERROR"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--neighbour-duty",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="also crawl without the pipeline while another process extracts pages with "
        "readability this share of the time (e.g. 0.45): how much a busy second core "
        "alone slows the crawler",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--neighbour", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        crawl_child(json.loads(args.child))
        return 0
    if args.neighbour:
        neighbour(json.loads(args.neighbour))
        return 0
    from trees import check_base

    if problem := check_base(args.base):
        parser.error(problem)

    from scrapy_neardup.newsworld import build_world

    if not args.data.exists():
        parser.error(f"corpus not found: {args.data} (give --data)")
    if args.world == "real":
        from real_templates import real_world

        world = real_world(args.data.parent.parent, args.stories or 300, tuple(args.reprints), args.seed)
        stories = list(world.stories.values())
    else:
        stories = corpus_stories(args.data, seed=args.seed)
        if args.stories:
            stories = stories[: args.stories]
        world = build_world(stories=stories, seed=args.seed, reprints=tuple(args.reprints), per_page=20)
    sizes = [len(world.body(p)) for p in world.story_of]
    print(
        f"news world: {len(stories)} stories ({statistics.mean(len(s.text) for s in stories):.0f} chars on average) "
        f"-> {len(world.story_of)} article pages + {len(world.pages) - len(world.story_of)} other pages on "
        f"{len(world.start_paths)} sites, {statistics.mean(sizes) / 1024:.1f} KB per article page",
        flush=True,
    )
    if len(world.story_of) < 3000 and not args.stories and args.world == "hand":
        print("warning: fewer than 3,000 article pages; raise --reprints", flush=True)
    server, base_url = start_server(world, args.delay)
    base = {
        "base_url": base_url,
        "concurrency": args.concurrency,
        "log_level": args.log_level,
        "first_item_only": args.first_item_only,
    }
    runs: dict[str, list[dict]] = {}
    labels = {None: "pipeline default"}
    try:
        configs = [("without pipeline", dict(base, pipeline=False, workers=None))]
        if args.neighbour_duty:
            paths = sorted(world.story_of)[:: max(1, len(world.story_of) // 40)]
            busy = {"base_url": base_url, "paths": paths, "duty": args.neighbour_duty}
            configs.append(
                (
                    f"without pipeline, readability {args.neighbour_duty:.0%} beside",
                    dict(base, pipeline=False, workers=None, neighbour=busy),
                )
            )
        for workers in args.workers:
            for thread in args.store_thread:
                label = f"with pipeline ({labels.get(workers, f'{workers} workers')})"
                if thread != "auto":
                    label = f"{label[:-1]}, store thread {thread})"
                configs.append(
                    (
                        label,
                        dict(base, pipeline=True, workers=workers, store_thread=thread, extra=_settings(args.set)),
                    )
                )
                for variant in args.variant:
                    configs.append(
                        (
                            f"{label[:-1]}, {variant})",
                            dict(
                                base,
                                pipeline=True,
                                workers=workers,
                                store_thread=thread,
                                extra=_settings(args.set + variant.split()),
                            ),
                        )
                    )
        if args.addon:
            configs.append(
                (
                    "with pipeline (add-on)",
                    dict(base, pipeline=True, workers=None, addon=True, extra=_settings(args.set)),
                )
            )
        if args.base:
            configs.append(
                (
                    "with pipeline (base tree)",
                    dict(base, pipeline=True, workers=None, tree=args.base, extra=_settings(args.set)),
                )
            )
            if args.addon:
                configs.append(
                    (
                        "with pipeline (base tree, add-on)",
                        dict(base, pipeline=True, workers=None, addon=True, tree=args.base, extra=_settings(args.set)),
                    )
                )
        # One crawl of each configuration first, not counted: the first crawl of a tree writes
        # its bytecode (and that of every module Scrapy imports), which later ones read.
        for _, config in configs:
            run_crawl(config, server.pid)
        for round_ in range(args.repeat):
            # Each round starts with the next configuration: a later place in a round ran faster
            # in some runs, and rotating spreads that over all of them.
            shift = round_ % len(configs)
            for label, config in configs[shift:] + configs[:shift]:
                result = run_crawl(config, server.pid)
                runs.setdefault(label, []).append(result)
                server_cpu = f", server cpu {result['server_cpu']:.1f} s" if result["server_cpu"] is not None else ""
                first = f", first item at {result['first_item']:.2f} s" if result.get("first_item") is not None else ""
                print(
                    f"  round {round_ + 1}: {label}: {result['pages']} pages in {result['elapsed']:.1f} s, "
                    f"{result['rate']:.1f} pages/s, crawl cpu {result['cpu']:.1f} s{server_cpu}{first}",
                    flush=True,
                )
    finally:
        server.terminate()
        server.join(5)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"\ncrawl of {base_url} with CONCURRENT_REQUESTS {args.concurrency}, HTML extraction on, drop mode, "
        f"LevelDB store, server delay {args.delay * 1000:g} ms; median of {args.repeat} run(s); "
        f"{os.cpu_count()} cores, load average {load:.1f} at the end"
    )
    header = (
        f"{'run':36} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'kept':>6} {'dropped':>8} "
        f"{'crawler cpu ms/page*':>20} {'server cpu s':>12}"
    )
    print(header)
    print("-" * len(header))
    summary: dict[str, Any] = {
        "world": {"stories": len(stories), "article_pages": len(world.story_of), "pages": len(world.pages)},
        "settings": {
            "concurrency": args.concurrency,
            "delay": args.delay,
            "repeat": args.repeat,
            "cores": os.cpu_count(),
            "load_average": load,
        },
        "runs": {},
    }
    baseline = None
    for label, results in runs.items():
        best = sorted(results, key=lambda r: r["rate"])[len(results) // 2]
        rate = statistics.median(r["rate"] for r in results)
        kept = len(best["kept"])
        server_cpu = f"{best['server_cpu']:.1f}" if best["server_cpu"] is not None else "-"
        cpu_per_page = statistics.median(1000 * r["crawl_cpu"] / r["pages"] for r in results)
        print(
            f"{label:36} {best['pages']:>6} {best['elapsed']:>8.1f} {rate:>8.1f} {kept:>6} "
            f"{best['dropped']:>8} {cpu_per_page:>20.2f} {server_cpu:>12}"
        )
        firsts = [r["first_item"] for r in results if r.get("first_item") is not None]
        entry = {
            "rate": rate,
            "rates": [r["rate"] for r in results],
            "first_item": statistics.median(firsts) if firsts else None,
            "pages": best["pages"],
            "crawl_cpu_ms_per_page": cpu_per_page,
            "elapsed": best["elapsed"],
            "kept": kept,
            "dropped": best["dropped"],
            "cpu": best["cpu"],
            "server_cpu": best["server_cpu"],
            "neardup": best["neardup"],
            "finish_reason": best["finish_reason"],
        }
        if baseline is None:
            baseline, baseline_runs, baseline_cpu = rate, results, cpu_per_page
        else:
            entry["ratio"] = rate / baseline if baseline else 0.0
            # Runs of one round ran one after the other: their ratio is less exposed to other load.
            entry["paired_ratios"] = [r["rate"] / b["rate"] for r, b in zip(results, baseline_runs) if b["rate"]]
            entry["first_item_rounds"] = [
                r["first_item"] - b["first_item"]
                for r, b in zip(results, baseline_runs)
                if r.get("first_item") is not None and b.get("first_item") is not None
            ]
            # If the crawler process had a core to itself (workers on the other), the rate would
            # follow its CPU per page: an estimate that other load on the machine hardly moves.
            entry["cpu_ratio"] = baseline_cpu / cpu_per_page if cpu_per_page else 0.0
            if "beside" in label:  # a diagnostic run without the pipeline: no floor, no truth
                entry["diagnostic"] = True
            else:
                entry["truth"] = truth(world, best["kept"])
        summary["runs"][label] = entry
    print("* CPU time of the crawling process itself, per page (worker processes not included)")
    ok = True
    for label, entry in summary["runs"].items():
        if "ratio" not in entry:
            continue
        if entry.get("diagnostic"):
            paired = ", ".join(f"{r:.2f}" for r in entry["paired_ratios"])
            print(
                f"\n{label}: ratio {entry['ratio']:.3f} to the crawl alone (per round: {paired}); "
                f"crawler-CPU ratio {entry['cpu_ratio']:.3f}; nothing reaches the crawler process"
            )
            continue
        verdict = "meets" if entry["ratio"] >= FLOOR else "BELOW"
        if args.first_item_only:  # crawls of one kept item: no rate to compare
            verdict = "not measured: --first-item-only, against"
        ok = ok and (args.first_item_only or entry["ratio"] >= FLOOR)
        t = entry["truth"]
        stats = entry["neardup"]
        extracted = stats.get("neardup/extracted", 0)
        per_page = 1000 * stats.get("neardup/extract_seconds", 0.0) / extracted if extracted else float("nan")
        paired = ", ".join(f"{r:.2f}" for r in entry["paired_ratios"])
        print(
            f"\n{label}: ratio {entry['ratio']:.3f} ({verdict} the floor {FLOOR}); per round: {paired} "
            f"(median {statistics.median(entry['paired_ratios']):.3f}); crawler-CPU ratio {entry['cpu_ratio']:.3f}"
        )
        base_first = summary["runs"][next(iter(summary["runs"]))].get("first_item")
        if entry.get("first_item") is not None and base_first is not None:
            rounds = ", ".join(f"{r:+.2f}" for r in entry["first_item_rounds"])
            print(
                f"  first item after {entry['first_item']:.2f} s (median), {entry['first_item'] - base_first:+.2f} s "
                f"against the crawl without the pipeline (floor +{FIRST_ITEM_FLOOR} s); each round against "
                f"its crawl without: {rounds}"
            )
        print(
            f"  ground truth: {t['kept_once']}/{t['stories']} stories kept exactly once, {t['lost']} lost "
            f"({t['lost_unreprinted']} never reprinted), {t['kept_twice_or_more']} kept more than once"
        )
        for miss in t["missed"][:5]:
            print(
                f"    kept twice: story {miss['story']}: "
                + "; ".join(f"{k['site']} {'+'.join(k['edits'])}" for k in miss["kept"])
            )
        print(
            f"  extraction {per_page:.1f} ms/page; neardup stats: "
            + ", ".join(
                f"{k[len('neardup/') :]}={v:.4g}" if isinstance(v, float) else f"{k[len('neardup/') :]}={v}"
                for k, v in sorted(stats.items())
            )
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
