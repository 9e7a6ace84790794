"""The CPU part of checking an item: HTML extraction and fingerprinting.

The same :class:`Preparer` runs in the reactor thread (``NEARDUP_WORKERS = 0``) or in each
process of a :class:`WorkerPool`, so both paths give the same fingerprints. Only the
store check stays in the crawler process, in arrival order.
"""

from __future__ import annotations

import ast
import concurrent.futures
import concurrent.futures.process
import multiprocessing
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable

from .extract import ExtractionError, decode_html, looks_binary
from .fingerprint import Fingerprint, Fingerprinter, Recipe

OK = "ok"
NO_TEXT = "no_text"
ERROR = "error"


@dataclass
class Prepared:
    """The outcome of preparing one item's text; picklable, so it can come back from a worker."""

    status: str  # OK, NO_TEXT or ERROR
    fingerprint: Fingerprint | None = None
    error: str | None = None  # "ExceptionName: message" for ERROR
    extract_seconds: float | None = None  # None when the text field was used
    fingerprint_seconds: float = 0.0


class Preparer:
    """Text or HTML in, :class:`Prepared` out; never raises for bad input."""

    def __init__(self, recipe: Recipe, extractor: Callable[[str], str] | str):
        if isinstance(extractor, str):
            from scrapy.utils.misc import load_object

            extractor = load_object(extractor)
        self.extractor: Callable[[str], str] = extractor  # type: ignore[assignment]
        self.fingerprinter = Fingerprinter(recipe)

    def __call__(self, source: str | bytes, is_html: bool) -> Prepared:
        extract_seconds = None
        if is_html:
            started = time.perf_counter()
            try:
                if isinstance(source, bytes):
                    if looks_binary(source):
                        raise ExtractionError(f"binary content, not HTML ({len(source)} bytes)")
                    source = decode_html(source)
                text = self.extractor(source)
                if text is not None and not isinstance(text, str):
                    raise TypeError(f"extractor returned {type(text).__name__}, not str")
            except Exception as exc:  # a bad page or a broken extractor must not stop the crawl
                return Prepared(ERROR, error=f"{type(exc).__name__}: {exc}")
            extract_seconds = time.perf_counter() - started
        else:
            text = source  # type: ignore[assignment]
        if not text or not text.strip():
            return Prepared(NO_TEXT, extract_seconds=extract_seconds)
        started = time.perf_counter()
        try:
            fingerprint = self.fingerprinter.fingerprint(text)
        except Exception as exc:
            return Prepared(ERROR, error=f"{type(exc).__name__}: {exc}", extract_seconds=extract_seconds)
        return Prepared(OK, fingerprint, None, extract_seconds, time.perf_counter() - started)


_PREPARER: Preparer | None = None


def _initialize(recipe: Recipe, extractor: Callable[[str], str] | str) -> None:
    global _PREPARER
    _PREPARER = Preparer(recipe, extractor)


def _prepare(source: str | bytes, is_html: bool) -> Prepared:
    assert _PREPARER is not None, "worker used before its initializer ran"
    return _PREPARER(source, is_html)


def _ready() -> bool:
    return _PREPARER is not None


def main_script_is_guarded() -> bool:
    """False when the script that started this process would start the crawl again on import.

    Worker processes import the main script (as every non-fork multiprocessing start method
    does); a script that calls ``CrawlerProcess.start()`` outside an
    ``if __name__ == "__main__":`` block would then start a crawl in each worker, and the
    pool would never become ready. ``scrapy crawl`` and ``python -m scrapy`` are guarded.
    """
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    if not path:
        return True  # interactive, or run from a zip or frozen binary: nothing is imported
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return True  # not Python source we can read: assume the usual console script
    return any(isinstance(node, ast.If) and _tests_main(node.test) for node in tree.body)


def _tests_main(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    sides = [test.left, test.comparators[0]]
    names = {side.id for side in sides if isinstance(side, ast.Name)}
    values = {side.value for side in sides if isinstance(side, ast.Constant)}
    return names == {"__name__"} and values == {"__main__"}


class WorkerPool:
    """A process pool whose workers each hold a :class:`Preparer` for the same recipe.

    Workers are started by a fork server (not by forking the crawler, which runs threads),
    so a script that starts a crawl needs the usual ``if __name__ == "__main__":`` guard.

    Pages are handed to the executor by a feeder thread: ``ProcessPoolExecutor.submit``
    wakes the executor's own thread through a pipe and, under the GIL, the caller often
    waits a thread switch interval (~5 ms) for it. The reactor thread only queues the page.
    """

    def __init__(self, size: int, recipe: Recipe, extractor: Callable[[str], str] | str):
        self.size = size
        self._args = (recipe, extractor)
        self._executor = self._start()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._feeder = threading.Thread(target=self._feed, name="neardup-pool-feeder", daemon=True)
        self._feeder.start()

    def _start(self) -> concurrent.futures.ProcessPoolExecutor:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if context.get_start_method() == "forkserver":
            # Import the heavy modules once in the fork server, not in each worker.
            context.set_forkserver_preload(["scrapy_neardup.workers", "scrapy_neardup.extract"])
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self.size, mp_context=context, initializer=_initialize, initargs=self._args
        )


    def submit(self, source: str | bytes, is_html: bool, done: Callable[[concurrent.futures.Future], None]) -> None:
        """Prepare ``source`` in a worker; ``done(future)`` is called from another thread."""
        self._jobs.put((source, is_html, done))

    def _feed(self) -> None:
        # Start every worker now rather than on the first page (starting the fork server
        # takes a second or two: not in the reactor thread).
        for _ in range(self.size):
            self._executor.submit(_ready)
        while True:
            job = self._jobs.get()
            if job is None:
                return
            source, is_html, done = job
            try:
                future = self._submit_now(source, is_html)
            except Exception as exc:  # the pool cannot even be restarted: fail this page only
                future = concurrent.futures.Future()
                future.set_exception(exc)
            future.add_done_callback(done)

    def _submit_now(self, source: str | bytes, is_html: bool) -> concurrent.futures.Future:
        try:
            return self._executor.submit(_prepare, source, is_html)
        except concurrent.futures.process.BrokenProcessPool:
            # A worker died (killed, out of memory): start a new pool and go on.
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = self._start()
            return self._executor.submit(_prepare, source, is_html)

    def close(self) -> None:
        self._jobs.put(None)
        self._feeder.join()
        self._executor.shutdown(wait=True, cancel_futures=True)
