"""Two Scrapy processes crawl two local sites that reprint each other, sharing one Redis
store in drop mode: every story is stored once, whichever process met it first."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from support.news_corpus import ARTICLES, PROMOTION

from scrapy_neardup import open_store

TITLES = {
    "rail": "春运铁路发送旅客超三亿人次",
    "rice": "湖南早稻喜获丰收",
    "museum": "省博物馆新馆下月开放",
    "flood": "本市启动防汛三级应急响应",
    "chip": "国产车规级芯片通过认证",
    "marathon": "滨江国际马拉松鸣枪开跑",
    "library": "城东社区图书馆重新开放",
    "port": "前十月港口吞吐量保持增长",
}
ORIGINALS = {"a": ["rail", "rice", "museum", "flood"], "b": ["chip", "marathon", "library", "port"]}


def _page(site: str, name: str, title: str, paragraphs: list[str]) -> bytes:
    body = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
    nav = "".join(f'<li><a href="/{n}.html">{escape(t)}</a></li>' for n, t in TITLES.items())
    return (
        f'<html><head><meta charset="utf-8"><title>{escape(title)}</title></head><body>'
        f'<ul class="nav">{nav}</ul><h1>{escape(title)}</h1><div class="content">{body}</div>'
        f'<div class="footer">{site.upper()} 新闻网 版权所有</div></body></html>'
    ).encode()


def site_pages(site: str) -> dict[str, bytes]:
    """Each site carries its own four stories and reprints of the other site's four."""
    pages = {}
    for name, text in ARTICLES.items():
        paragraphs = text.split("\n")
        if name not in ORIGINALS[site]:
            other = "b" if site == "a" else "a"
            if site == "a":  # banner and editor line
                paragraphs = [f"转载自{other.upper()}新闻网"] + paragraphs + ["（责任编辑：王芳）"]
            else:  # a promotion on top and the last paragraph cut
                paragraphs = [PROMOTION[0]] + paragraphs[:-1] + [paragraphs[-1][:30]]
        pages[f"/{name}.html"] = _page(site, name, TITLES[name], paragraphs)
    links = "".join(f'<a href="/{n}.html">{escape(TITLES[n])}</a>' for n in ARTICLES)
    pages["/"] = f'<html><body><div class="list">{links}</div></body></html>'.encode()
    return pages


class Site:
    """One site on 127.0.0.1:<free port>, served from a background thread.

    A page is answered once the other site's page of the same path was asked for too, so
    the two crawls receive the two copies of a story at the same moment.
    """

    def __init__(self, pages: dict[str, bytes], meet: dict[str, threading.Barrier], on_get=None):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if on_get is not None:
                    on_get(self.path)
                try:
                    if meet:
                        meet[self.path].wait(timeout=10)
                except threading.BrokenBarrierError:
                    pass  # the other crawl did not ask in time: serve anyway
                body = pages.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.root = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


CRAWL = """
import json, sys
import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy_neardup import Fingerprinter, Recipe

root, store, feed, stats_path, extra = sys.argv[1:6] if __name__ == "__main__" else [""] * 5


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Load the tokenizer and tables before the first page, so that the two crawls judge
        # the two copies of a story at the moment they receive them.
        Fingerprinter(Recipe()).fingerprint("预热" * 100)

    async def start(self):  # Scrapy >= 2.13
        yield scrapy.Request(root + "/")

    def start_requests(self):  # older Scrapy
        yield scrapy.Request(root + "/")

    def parse(self, response):
        yield from response.follow_all(css=".list a", callback=self.parse_article)

    def parse_article(self, response):
        yield {"url": response.url, "text": "\\n".join(response.css(".content p::text").getall())}


if __name__ == "__main__":  # the pipeline's worker pool re-imports this script
    process = CrawlerProcess({
        "ITEM_PIPELINES": {"scrapy_neardup.NearDupPipeline": 100},
        "NEARDUP_STORE": store,
        "NEARDUP_ACTION": "drop",
        "NEARDUP_WORKERS": 0,  # fingerprints in the crawl process, at once (no pool start-up)
        "FEEDS": {feed: {"format": "jsonlines"}},
        "LOG_LEVEL": "INFO",
        "CONCURRENT_REQUESTS": 4,
        **json.loads(extra or "{}"),
    })
    process.crawl(SiteSpider)
    (crawler,) = process.crawlers
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith(("neardup/", "item_", "elapsed", "finish_reason"))}
    with open(stats_path, "w") as handle:
        json.dump(stats, handle)
"""


def crawl(tmp_path: Path, name: str, root: str, store: str, **settings) -> subprocess.Popen:
    script = tmp_path / "crawl.py"
    script.write_text(CRAWL)
    return subprocess.Popen(
        [
            sys.executable,
            str(script),
            root,
            store,
            str(tmp_path / f"{name}.jsonl"),
            str(tmp_path / f"{name}.json"),
            json.dumps(settings),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )


def test_two_crawler_processes_share_one_redis_store(redis_url, tmp_path: Path):
    meet = {path: threading.Barrier(2) for path in site_pages("a")}
    sites = {name: Site(site_pages(name), meet) for name in ("a", "b")}
    try:
        runs = {name: crawl(tmp_path, name, site.root, redis_url) for name, site in sites.items()}
        for _name, run in runs.items():
            _, err = run.communicate(timeout=300)
            assert run.returncode == 0, err[-3000:]
            assert "Traceback" not in err, err[-3000:]
    finally:
        for site in sites.values():
            site.close()

    kept = [json.loads(line) for name in sites for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
    stories = sorted(item["url"].rsplit("/", 1)[1].removesuffix(".html") for item in kept)
    assert stories == sorted(ARTICLES)  # every story once, never both copies, never none
    stats = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in sites}
    assert sum(s.get("neardup/unique", 0) for s in stats.values()) == len(ARTICLES)
    assert sum(s.get("neardup/dropped", 0) for s in stats.values()) == len(ARTICLES)
    assert all(s.get("neardup/error", 0) == 0 for s in stats.values())

    with open_store(redis_url) as store:
        assert store.count() == len(ARTICLES)
        # every kept item was committed at item_scraped: no reservation is left pending
        assert store.client.zcard(store.prefix + "p") == 0
        records = [key.rsplit(b":", 1)[1] for key in store.client.scan_iter(match=store.prefix + "r:*")]
        stored = sorted(store.get(int(doc_id)).key for doc_id in records)
        assert stored == sorted(item["url"] for item in kept)


def test_unreachable_redis_fails_the_spider_at_open(tmp_path: Path):
    from support.redis_server import free_port

    site = Site(site_pages("a"), {})
    try:
        port = free_port()
        run = crawl(
            tmp_path, "gone", site.root, f"redis://:t0psecret@127.0.0.1:{port}/0", NEARDUP_REDIS_PARAMS={"retries": 0}
        )
        _, err = run.communicate(timeout=300)
    finally:
        site.close()
    assert f"redis://:***@127.0.0.1:{port}/0" in err
    assert "t0psecret" not in err
    stats = json.loads((tmp_path / "gone.json").read_text()) if (tmp_path / "gone.json").exists() else {}
    assert run.returncode != 0 or stats.get("item_scraped_count", 0) == 0
    assert "Crawled (200)" not in err  # nothing was crawled with no dedup store


def stop_when_stored(server, documents: int, after_requests: int, lost: threading.Event):
    """An ``on_get`` hook: at the ``after_requests``-th article request, wait until the store
    holds ``documents`` documents (the items before were checked), then stop the server."""
    seen = []

    def on_get(path: str) -> None:
        if path == "/" or lost.is_set():
            return
        seen.append(path)
        if len(seen) < after_requests:
            return
        server.wait_for_documents(documents)
        lost.set()
        server.stop()

    return on_get


def crawl_through_outage(
    tmp_path: Path, name: str, pages: dict[str, bytes], password: str | None = None, slow_after: float = 0.0, **settings
) -> tuple[str, dict]:
    """Crawl ``pages`` on a Redis store that stops after the fourth page, each page after
    that served ``slow_after`` seconds late; (stderr, stats)."""
    from support.redis_server import start_redis

    server = start_redis(password=password)
    lost = threading.Event()
    stop = stop_when_stored(server, 2, 4, lost)

    def on_get(path: str) -> None:
        stop(path)
        if lost.is_set():
            time.sleep(slow_after)

    site = Site(pages, {}, on_get=on_get)
    try:
        run = crawl(tmp_path, name, site.root, server.url(0), **settings)
        _, err = run.communicate(timeout=300)
    finally:
        site.close()
        server.stop()
    assert run.returncode == 0, err[-3000:]
    assert lost.is_set()
    return err, json.loads((tmp_path / f"{name}.json").read_text())


def numbered_pages(count: int) -> dict[str, bytes]:
    """``count`` article pages (the eight stories over and over, each with its number)."""
    names = list(ARTICLES)
    pages = {}
    for number in range(count):
        name = names[number % len(names)]
        paragraphs = [f"第{number}期", *ARTICLES[name].split("\n")]
        pages[f"/{number}.html"] = _page("a", name, TITLES[name], paragraphs)
    links = "".join(f'<a href="/{n}.html">{n}</a>' for n in range(count))
    pages["/"] = f'<html><body><div class="list">{links}</div></body></html>'.encode()
    return pages


def test_redis_lost_mid_crawl_stops_the_crawl_and_counts_what_passed_unchecked(tmp_path: Path):
    """Redis stops for good after the fourth page: items wait NEARDUP_STORE_DOWN_TIMEOUT for it,
    then the crawl stops. Every item was checked before the outage or passed unchecked and
    counted; none was dropped unchecked, and the close summary says how many passed."""
    pages = 400
    err, stats = crawl_through_outage(
        tmp_path,
        "lost",
        numbered_pages(pages),
        "mid-crawl-pw",
        slow_after=0.05,
        CONCURRENT_REQUESTS=2,
        NEARDUP_STORE_DOWN_TIMEOUT=2,
        NEARDUP_REDIS_PARAMS={"retries": 2},
    )
    assert stats["finish_reason"] == "neardup_store_down"
    assert stats["neardup/items"] < pages  # it did stop
    unchecked = stats["neardup/unchecked"]
    assert unchecked >= 1 and stats["neardup/store_down"] == unchecked
    assert stats.get("neardup/unique", 0) >= 2  # the items before the loss were checked
    judged = sum(stats.get(f"neardup/{k}", 0) for k in ("unique", "duplicate", "unchecked"))
    assert judged == stats["neardup/items"]
    kept = (tmp_path / "lost.jsonl").read_text().splitlines()
    assert len(kept) == stats["item_scraped_count"] == stats["neardup/items"] - stats.get("neardup/dropped", 0)
    assert f"{unchecked} passed unchecked" in err
    assert err.count("items wait for it") == 1 and "has been down for" in err and "neardup_store_down" in err
    assert "mid-crawl-pw" not in err


def test_sigterm_during_a_redis_outage_closes_promptly(tmp_path: Path):
    """SIGTERM while Redis is down: the items waiting for the store stop waiting, Scrapy's
    graceful stop finishes the pages in flight, each passing at once, and the process exits
    within seconds, not after NEARDUP_STORE_DOWN_TIMEOUT (60 s)."""
    import signal

    from support.redis_server import start_redis

    server = start_redis()
    lost, later = threading.Event(), threading.Event()
    stop = stop_when_stored(server, 2, 4, lost)
    after = []

    def on_get(path: str) -> None:
        stop(path)
        if lost.is_set():
            after.append(path)
            if len(after) == 20:
                later.set()
        time.sleep(0.02)

    site = Site(numbered_pages(400), {}, on_get=on_get)
    try:
        run = crawl(tmp_path, "term", site.root, server.url(0), CONCURRENT_REQUESTS=32)
        assert later.wait(120), "the crawl did not go on after Redis stopped"
        sent = time.monotonic()
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=120)
        closing = time.monotonic() - sent
    finally:
        site.close()
        server.stop()
    assert run.returncode == 0, err[-3000:]
    stats = json.loads((tmp_path / "term.json").read_text())
    assert stats["neardup/items"] < 400  # it did stop early
    assert stats["neardup/items"] == stats["item_scraped_count"] + stats.get("item_dropped_count", 0)
    judged = sum(stats.get(f"neardup/{k}", 0) for k in ("unique", "duplicate", "unchecked"))
    assert judged == stats["neardup/items"] and stats["neardup/unchecked"] >= 1
    assert closing < 12, closing
