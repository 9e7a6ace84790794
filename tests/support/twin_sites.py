"""Two local sites that reprint each other, and Scrapy crawls of one in a process of its own.

Site "a" carries four stories and reprints of site "b"'s four, and "b" the other way round;
a crawl writes its items and stats to files named after it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from support import warm_python
from support.crawls import LEAN
from support.news_corpus import ARTICLES, PROMOTION

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
    return warm_python.popen(
        [
            sys.executable,
            str(script),
            root,
            store,
            str(tmp_path / f"{name}.jsonl"),
            str(tmp_path / f"{name}.json"),
            json.dumps({**LEAN, **settings}),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )


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
