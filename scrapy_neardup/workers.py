"""The CPU part of checking an item: HTML extraction and fingerprinting.

The same :class:`Preparer` runs in the reactor thread (``NEARDUP_WORKERS = 0``) or in each
process of a :class:`WorkerPool`, so both paths give the same fingerprints. Only the
store check stays in the crawler process, in arrival order.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
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


class WorkerPool:
    """A process pool whose workers each hold a :class:`Preparer` for the same recipe.

    Workers are started by a fork server (not by forking the crawler, which runs threads),
    so a script that starts a crawl needs the usual ``if __name__ == "__main__":`` guard.
    """

    def __init__(self, size: int, recipe: Recipe, extractor: Callable[[str], str] | str):
        self.size = size
        self._args = (recipe, extractor)
        self._executor = self._start()

    def _start(self) -> concurrent.futures.ProcessPoolExecutor:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if context.get_start_method() == "forkserver":
            # Import the heavy modules once in the fork server, not in each worker.
            context.set_forkserver_preload(["scrapy_neardup.workers", "scrapy_neardup.extract"])
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self.size, mp_context=context, initializer=_initialize, initargs=self._args
        )

    def warm_up(self) -> list[concurrent.futures.Future]:
        """Start every worker now rather than on the first page."""
        return [self._executor.submit(_ready) for _ in range(self.size)]

    def submit(self, source: str | bytes, is_html: bool) -> concurrent.futures.Future:
        try:
            return self._executor.submit(_prepare, source, is_html)
        except concurrent.futures.process.BrokenProcessPool:
            # A worker died (killed, out of memory): start a new pool and go on.
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = self._start()
            return self._executor.submit(_prepare, source, is_html)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

