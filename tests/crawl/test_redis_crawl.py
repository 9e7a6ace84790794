"""Two Scrapy processes crawl two local sites that reprint each other, sharing one Redis
store in drop mode: every story is stored once, whichever process met it first."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from support.news_corpus import ARTICLES
from support.twin_sites import Site, crawl, numbered_pages, site_pages

from scrapy_neardup import open_store


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
    assert f"+ {unchecked} unchecked (store down or failing)" in err
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
