"""A Redis outage in the middle of a crawl: what the pipeline does when Redis is killed and
does not come back, when it comes back within NEARDUP_STORE_DOWN_TIMEOUT, and on SIGTERM.

    python benchmarks/redis_outage.py [--pages 300] [--delay 0.01] [--timeout 10] [--restart-after 3]

A local site serves numbered article pages (``--delay`` seconds each), each its own story;
Scrapy crawls it with NearDupPipeline on a real redis-server (``redis-server`` on PATH, with
appendonly and fsync always, so a restart keeps the data), which is killed once the store holds
5 documents. Three runs: Redis never comes back (seconds from the kill to the crawl's end, items
passed unchecked); Redis started again ``--restart-after`` seconds later (seconds from the
restart to the next item, items passed unchecked, stories stored twice); SIGTERM 5 s into an
outage (seconds from the signal to exit). With ``redis-sentinel`` on PATH, a fourth run crawls a
``redis+sentinel://`` store whose primary is killed (seconds until the replica is promoted and
items go on, items passed unchecked, stories stored twice).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PARAGRAPHS = [
    "本报讯 市交通运输局昨日发布消息，今年以来全市公共交通客运量持续回升，地铁日均客流再创新高。",
    "据介绍，为缓解早晚高峰压力，有关部门新开通定制公交线路十余条，并延长了部分线路的运营时间。",
    "市民普遍反映出行更加便捷，不少上班族表示换乘时间明显缩短，通勤体验有了很大改善。",
    "下一步，相关部门还将继续优化线网布局，推进公交专用道建设，提升城市公共交通的服务水平。",
]

CRAWL = """
import json, sys, time
import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess

root, store, log_path, timeout = sys.argv[1:5]


class Spider(scrapy.Spider):
    name = "outage"

    async def start(self):
        yield scrapy.Request(root + "/")

    def parse(self, response):
        yield from response.follow_all(css="a", callback=self.article)

    def article(self, response):
        yield {"url": response.url, "text": "\\n".join(response.css("p::text").getall())}


times = []
process = CrawlerProcess({
    "ITEM_PIPELINES": {"scrapy_neardup.NearDupPipeline": 100},
    "NEARDUP_STORE": store, "NEARDUP_WORKERS": 0, "LOG_LEVEL": "WARNING", "CONCURRENT_REQUESTS": 8,
    "NEARDUP_STORE_DOWN_TIMEOUT": float(timeout),
})
crawler = process.create_crawler(Spider)
for signal in (signals.item_scraped, signals.item_dropped):
    crawler.signals.connect(lambda **kw: times.append(time.time()), signal=signal, weak=False)
process.crawl(crawler)
process.start()
with open(log_path, "w") as handle:
    json.dump({"times": times, "stats": {k: v for k, v in crawler.stats.get_stats().items()
                                          if k.startswith(("neardup/", "finish_reason"))}}, handle)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(workdir: str, port: int | None = None) -> tuple[subprocess.Popen, int]:
    port = port or free_port()
    server = subprocess.Popen(
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--dir",
            workdir,
        ],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return server, port
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def documents(port: int) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
        sock.sendall(b"ZCARD neardup:{default}:t\r\n")
        return int(sock.recv(64)[1:].split(b"\r\n")[0])


def serve(pages: int, delay: float) -> ThreadingHTTPServer:
    def page(number: int) -> bytes:
        # Each page its own story: the paragraphs' characters shuffled by the page number.
        rng = random.Random(number)
        body = "".join(f"<p>{''.join(rng.sample(p, len(p)))}</p>" for p in PARAGRAPHS)
        return f'<html><head><meta charset="utf-8"></head><body>{body}</body></html>'.encode()

    index = "".join(f'<a href="/{n}.html">{n}</a>' for n in range(pages)).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(delay)
            body = index if self.path == "/" else page(int(self.path.strip("/").split(".")[0]))
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_crawl(workdir: str, site: ThreadingHTTPServer, store: str, timeout: float) -> tuple[subprocess.Popen, Path]:
    """The crawl process over ``site`` on ``store``, and the file its times and stats go to."""
    script, log = Path(workdir) / "crawl.py", Path(workdir) / "log.json"
    script.write_text(CRAWL)
    root = f"http://127.0.0.1:{site.server_address[1]}"
    crawl = subprocess.Popen(
        [sys.executable, str(script), root, store, str(log), str(timeout)],
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    return crawl, log


def run(
    pages: int, delay: float, timeout: float, restart_after: float | None = None, sigterm_after: float | None = None
) -> dict:
    with tempfile.TemporaryDirectory() as workdir:
        redis, port = start_redis(workdir)
        site = serve(pages, delay)
        crawl, log = start_crawl(workdir, site, f"redis://127.0.0.1:{port}/0", timeout)
        while crawl.poll() is None and documents(port) < 5:
            time.sleep(0.02)
        redis.kill()
        redis.wait()
        down_at = time.time()
        back_at = closing = stored = None
        if restart_after is not None:
            time.sleep(restart_after)
            redis, _ = start_redis(workdir, port)
            back_at = time.time()
        if sigterm_after is not None:
            time.sleep(sigterm_after)
            sent = time.monotonic()
            crawl.send_signal(signal.SIGTERM)
            crawl.wait(300)
            closing = time.monotonic() - sent
        crawl.wait(900)
        ended_at = time.time()
        if back_at is not None:
            stored = documents(port)
        redis.kill()
        redis.wait()
        site.shutdown()
        result = json.loads(log.read_text())
    times = result["times"]
    after = [t for t in times if back_at is not None and t >= back_at]
    return {
        "items_before": len([t for t in times if t < down_at]),
        "end_seconds": round(ended_at - down_at, 1),
        "resumed_seconds": round(min(after) - back_at, 2) if after else None,
        "stored": stored,
        "close_seconds": round(closing, 2) if closing is not None else None,
        "stats": result["stats"],
    }


def run_failover(pages: int, delay: float, timeout: float) -> dict:
    """The primary of a Sentinel group killed mid-crawl (the tests' fixture starts the group:
    primary, replica, one sentinel with down-after-milliseconds 500)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from support.redis_server import start_sentinel_group

    group = start_sentinel_group()
    site = serve(pages, delay)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            crawl, log = start_crawl(workdir, site, group.url(0), timeout)
            while crawl.poll() is None and documents(group.primary.port) < 5:
                time.sleep(0.02)
            with group.primary.client() as primary:
                primary.wait(1, 5000)  # the replica has every write
            group.primary.kill()
            down_at = time.time()
            while group.primary_port() != group.replica.port:
                time.sleep(0.01)
            promoted_at = time.time()
            crawl.wait(900)
            result = json.loads(log.read_text())
        stored = documents(group.replica.port)
    finally:
        site.shutdown()
        group.stop()
    after = [t for t in result["times"] if t >= down_at]
    return {
        "promoted_seconds": round(promoted_at - down_at, 2),
        "resumed_seconds": round(min(after) - down_at, 2) if after else None,
        "stored": stored,
        "stats": result["stats"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--delay", type=float, default=0.01, help="seconds the site takes per page")
    parser.add_argument("--timeout", type=float, default=10.0, help="NEARDUP_STORE_DOWN_TIMEOUT")
    parser.add_argument("--restart-after", type=float, default=3.0, help="seconds Redis stays down in the second run")
    args = parser.parse_args()
    gone = run(args.pages, args.delay, args.timeout)
    stats = gone["stats"]
    print(
        f"Redis gone for good: the crawl ended {gone['end_seconds']} s after the kill ({stats.get('finish_reason')}); "
        f"{gone['items_before']} items before the kill, {stats.get('neardup/unchecked', 0)} passed unchecked; "
        f"stats {stats}"
    )
    back = run(args.pages, args.delay, args.timeout, restart_after=args.restart_after)
    stats = back["stats"]
    print(
        f"Redis back after {args.restart_after} s: items went on {back['resumed_seconds']} s after the restart; "
        f"{stats.get('neardup/unchecked', 0)} passed unchecked, {stats.get('neardup/store_waited', 0)} waited, "
        f"{stats.get('neardup/unique', 0)} unique of {args.pages} stories, {back['stored']} stored "
        f"({stats.get('finish_reason')}); stats {stats}"
    )
    if shutil.which("redis-sentinel"):
        failover = run_failover(args.pages, args.delay, args.timeout)
        stats = failover["stats"]
        print(
            f"Sentinel failover: replica promoted {failover['promoted_seconds']} s after the primary was killed, "
            f"items went on {failover['resumed_seconds']} s after the kill; {stats.get('neardup/unchecked', 0)} "
            f"passed unchecked, {stats.get('neardup/store_waited', 0)} waited, {stats.get('neardup/unique', 0)} unique "
            f"of {args.pages} stories, {failover['stored']} stored ({stats.get('finish_reason')}); stats {stats}"
        )
    else:
        print("Sentinel failover: skipped, redis-sentinel is not installed")
    stopped = run(args.pages * 10, args.delay, 60.0, sigterm_after=5.0)
    print(
        f"SIGTERM 5 s into the outage (NEARDUP_STORE_DOWN_TIMEOUT 60 s): closed in {stopped['close_seconds']} s; "
        f"{stopped['stats'].get('neardup/unchecked', 0)} passed unchecked"
    )


if __name__ == "__main__":
    main()
