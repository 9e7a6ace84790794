"""Worker processes: what crosses the pipes between them and the crawler."""

from __future__ import annotations

import os
import subprocess
import sys

from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_neardup.crawl.workers import WorkerPool, read_available
from scrapy_neardup.fingerprints.fingerprint import Recipe
from scrapy_neardup.fingerprints.prepare import OK, Preparer
from scrapy_neardup.newsworld.small import STORIES

HTML = (
    "<html><body><article>" + "".join(f"<p>{p}</p>" for p in STORIES["metro"].paragraphs) + "</article></body></html>"
)
EXTRACTOR = "scrapy_neardup.fingerprints.extract.html_to_text"


def test_read_available_takes_all_the_pipe_holds_and_leaves_its_end():
    reader, writer = os.pipe()
    os.set_blocking(reader, False)
    try:
        written = bytes(range(256)) * 200  # 51,200 bytes: over Twisted's 8 KB a read, under a pipe's 64 KB
        os.write(writer, written)
        assert read_available(reader) == written
        assert read_available(reader) == b""  # empty: returns at once, does not block
        os.close(writer)
        writer = None
        assert read_available(reader) == b""
        assert os.read(reader, 1) == b""  # the end of file is still there for the reactor
    finally:
        os.close(reader)
        if writer is not None:
            os.close(writer)


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
