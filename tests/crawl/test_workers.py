"""Worker processes: what crosses the pipes between them and the crawler."""

from __future__ import annotations

import subprocess
import sys

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from support.local_site import nested_page

from scrapy_neardup.crawl.compat import wait
from scrapy_neardup.crawl.worker_process import page_frame, read_page
from scrapy_neardup.crawl.workers import WorkerPool
from scrapy_neardup.fingerprints.fingerprint import Recipe
from scrapy_neardup.fingerprints.prepare import OK, Preparer
from scrapy_neardup.fingerprints.titles import title_hash
from scrapy_neardup.newsworld.small import STORIES
from scrapy_neardup.workerpipes import LENGTH, PIPE_SIZE, TASKS_FD, unsent

HTML = (
    "<html><body><article>" + "".join(f"<p>{p}</p>" for p in STORIES["metro"].paragraphs) + "</article></body></html>"
)
EXTRACTOR = "scrapy_neardup.fingerprints.extract.html_to_text"


def _signals(fingerprint):
    return (fingerprint.sentence_keys, fingerprint.simhash, fingerprint.sketch.hashes.tolist(), fingerprint.sketch_keys)


@deferred_f_from_coro_f
async def test_workers_send_the_extracted_body_back_only_when_asked():
    recipe = Recipe().resolved()
    local = Preparer(recipe, EXTRACTOR)(HTML, True)
    for send_text in (False, True):
        pool = WorkerPool(1, recipe, EXTRACTOR, send_text=send_text)
        try:
            prepared = [await pool.prepare(HTML, True) for _ in range(3)]
        finally:
            pool.close()
        for page in prepared:
            assert page.status == OK
            assert _signals(page.fingerprint) == _signals(local.fingerprint)  # the same either way
            assert page.text == (local.text if send_text else None)


def test_a_worker_process_imports_neither_scrapy_nor_twisted():
    """Their import would be a good part of a worker's start, which the first item waits for."""
    body = "from scrapy_neardup.crawl.worker_process import serve"  # what a worker runs first
    probe = f"import sys; {body}; print(sorted({{m.split('.')[0] for m in sys.modules}} & {{'scrapy', 'twisted'}}))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# A crawl whose pipeline Scrapy has just built (from_crawler), in a process of its own.
_FROM_CRAWLER = """
import sys
from scrapy.utils.test import get_crawler
from scrapy_neardup.crawl.pipeline import NearDupPipeline
crawler = get_crawler(settings_dict={"NEARDUP_STORE": "memory://probe", "NEARDUP_WORKERS": 1})
crawler.crawling = True
pipeline = NearDupPipeline.from_crawler(crawler)
workers = len(pipeline.pool._workers) if pipeline.pool else 0
loaded = [name for name in HEAVY if name in sys.modules]
pipeline._stop_workers()
print(workers, loaded)
"""


def test_the_workers_start_before_the_crawler_imports_numpy_and_the_engine():
    """Scrapy imports the pipeline's module just before from_crawler, which starts the workers:
    what the module imports delays them. The engine, the stores and numpy are imported by
    open_spider, while the workers start beside it."""
    heavy = (
        "numpy",
        "scrapy_neardup.engine.detector",
        "scrapy_neardup.fingerprints.fingerprint",
        "scrapy_neardup.stores.base",
    )
    probe = f"HEAVY = {heavy!r}\n{_FROM_CRAWLER}"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1 []"


_LOADS_BEFORE_THE_REACTOR_RUNS = """
import time
from scrapy.utils.test import get_crawler
from scrapy_neardup.crawl.pipeline import NearDupPipeline
crawler = get_crawler(settings_dict={"NEARDUP_STORE": "memory://probe", "NEARDUP_WORKERS": 1})
crawler.crawling = True
pipeline = NearDupPipeline.from_crawler(crawler)
pid = pipeline.pool._workers[0].transport.pid
loaded = False
for _ in range(600):
    with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
        loaded = "_multiarray_umath" in maps.read()
    if loaded:
        break
    time.sleep(0.1)
pipeline._stop_workers()
print(loaded)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the worker's maps in Linux's /proc")
def test_a_worker_loads_its_tables_before_the_reactor_runs():
    """Scrapy runs the reactor well after it builds the pipeline (and the add-on's extension):
    the worker gets its recipe at once, not at the reactor's first turn, and loads numpy and
    its tables meanwhile. Here the reactor never runs."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADS_BEFORE_THE_REACTOR_RUNS], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


@pytest.mark.parametrize(
    "source",
    [
        HTML,
        "<p>半个代理对\ud800照样传过去</p>",  # a lone surrogate (a broken page) crosses unchanged
        HTML.encode("gb18030"),  # bytes cross as they are: the worker decodes them as HTML
        b"\xff\xfe\x00 not text",
    ],
)
def test_a_page_crosses_to_the_worker_exactly(source):
    frame = b"".join(page_frame(source, True, "https://a.example/\udc80", "a.example", "标题\ud800"))
    (length,) = LENGTH.unpack_from(frame)
    assert length == len(frame) - LENGTH.size
    back = read_page(frame[LENGTH.size :])
    assert back == (source, True, "https://a.example/\udc80", "a.example", "标题\ud800")
    assert type(back[0]) is type(source)


@deferred_f_from_coro_f
async def test_a_worker_gives_what_the_crawler_would_for_pages_of_one_site():
    """The worker's warm-up page leaves no trace: the lines two pages of a site share are the
    site's own text there as in a fresh Preparer, page after page."""
    recipe = Recipe().resolved()
    menu = "".join(f"<p>本站首页 新闻中心 联系我们 第{n}栏目导航链接列表</p>" for n in range(3))
    pages = [
        (f"<html><body><article>{menu}" + "".join(f"<p>{p}</p>" for p in story.paragraphs) + "</article></body></html>")
        for story in STORIES.values()
    ][:4]
    keys = [f"https://site.example/{n}.html" for n in range(len(pages))]
    local = Preparer(recipe, EXTRACTOR)
    expected = [local(page, True, key, "site.example") for page, key in zip(pages, keys)]
    pool = WorkerPool(1, recipe, EXTRACTOR, send_text=True)
    try:
        got = [await pool.prepare(page, True, key, "site.example") for page, key in zip(pages, keys)]
    finally:
        pool.close()
    assert [p.status for p in got] == [p.status for p in expected]
    assert [p.text for p in got] == [p.text for p in expected]
    assert "本站首页" in expected[0].text and "本站首页" not in expected[1].text  # the site's text went
    assert [_signals(p.fingerprint) for p in got] == [_signals(p.fingerprint) for p in expected]


@deferred_f_from_coro_f
async def test_a_worker_hashes_the_headline_into_the_fingerprint():
    """The item's headline (NEARDUP_TITLE_FIELD) crosses with its page and is hashed in the
    worker, as the crawler's own Preparer hashes it; a page without one has none."""
    story = next(iter(STORIES.values()))
    page = "<html><body><article>" + "".join(f"<p>{p}</p>" for p in story.paragraphs) + "</article></body></html>"
    recipe = Recipe().resolved()
    local = Preparer(recipe, EXTRACTOR)
    pool = WorkerPool(1, recipe, EXTRACTOR)
    try:
        titled = await pool.prepare(page, True, "https://a.example/1", "a.example", "河边的早晨")
        untitled = await pool.prepare(page, True, "https://b.example/1", "b.example")
    finally:
        pool.close()
    assert titled.fingerprint.title == title_hash("河边的早晨") != 0
    assert (
        titled.fingerprint.title
        == local(page, True, "https://a.example/1", "a.example", "河边的早晨").fingerprint.title
    )
    assert untitled.fingerprint.title == 0


@deferred_f_from_coro_f
async def test_a_page_gets_the_whole_time_bound_from_its_own_start():
    """A worker's one timer, armed by an earlier page, does not cut a later page short: the
    slow page started a second after the first still has its 1.5 s."""
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    from scrapy_neardup.fingerprints.prepare import TIMEOUT

    story = next(iter(STORIES.values()))
    page = "<html><body><article>" + "".join(f"<p>{p}</p>" for p in story.paragraphs) + "</article></body></html>"
    pool = WorkerPool(1, Recipe().resolved(), EXTRACTOR, timeout=1.5)
    try:
        assert (await pool.prepare(page, True, "https://a.example/1", "a.example")).status == OK
        await wait(deferLater(reactor, 1.0, lambda: None))
        started = reactor.seconds()
        slow = await pool.prepare(nested_page(), True, "https://a.example/slow", "a.example")
        took = reactor.seconds() - started
        after = await pool.prepare(page, True, "https://b.example/1", "b.example")
    finally:
        pool.close()
    assert slow.status == TIMEOUT
    assert 1.45 <= took < 10
    assert after.status == OK  # on the worker that replaced the killed one


def test_what_is_left_of_pieces_after_a_partial_write():
    pieces = [b"head", b"", b"body of the page"]
    assert unsent(pieces, 0) == pieces[:1] + pieces[2:]
    assert unsent(pieces, 2) == [b"ad", b"body of the page"]
    assert unsent(pieces, 4) == [b"body of the page"]
    assert unsent(pieces, 9) == [b"of the page"]
    assert unsent(pieces, 20) == []


@deferred_f_from_coro_f
async def test_pages_over_the_pipe_s_size_sent_together_arrive_whole_and_in_order():
    """A page larger than the pipe is written in part at once and the rest by Twisted; the pages
    sent after it wait behind that rest, so each arrives whole, in order, and is answered as
    the crawler's own Preparer answers it."""
    recipe = Recipe().resolved()
    stories = list(STORIES.values())[:4]
    filler = "<div>" + "<span>站点导航 新闻 体育 财经</span>" * 60_000 + "</div>"  # about 3 MB as UTF-8
    pages = [
        "<html><body>"
        + (filler if n == 1 else "")
        + "<article>"
        + "".join(f"<p>{p}</p>" for p in story.paragraphs)
        + "</article></body></html>"
        for n, story in enumerate(stories)
    ]
    assert len(pages[1].encode("utf-8")) > 2 * PIPE_SIZE
    local = Preparer(recipe, EXTRACTOR)
    expected = [local(page, True, f"https://s{n}.example/1", f"s{n}.example") for n, page in enumerate(pages)]
    pool = WorkerPool(1, recipe, EXTRACTOR)
    try:
        await pool.prepare("<p>ready</p>", False)  # the worker has started: pages go out at once
        answers = [pool.submit(page, True, f"https://s{n}.example/1", f"s{n}.example") for n, page in enumerate(pages)]
        got = [await wait(answer) for answer in answers]
    finally:
        pool.close()
    assert [p.status for p in got] == [OK] * 4
    assert [_signals(p.fingerprint) for p in got] == [_signals(p.fingerprint) for p in expected]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_a_worker_takes_a_whole_page_in_one_write():
    import fcntl

    pool = WorkerPool(1, Recipe().resolved(), EXTRACTOR)
    try:
        tasks = pool._workers[0].transport.pipes[TASKS_FD]
        assert fcntl.fcntl(tasks.fileno(), fcntl.F_GETPIPE_SZ) >= min(PIPE_SIZE, _pipe_max_size())
    finally:
        pool.close()


def _pipe_max_size() -> int:
    with open("/proc/sys/fs/pipe-max-size", encoding="ascii") as handle:
        return int(handle.read())
