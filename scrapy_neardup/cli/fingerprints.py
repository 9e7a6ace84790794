"""Fingerprints for the texts (or pages' HTML) of a batch of lines, in this process or, with
``--workers``, in a pool of worker processes; a text that cannot be fingerprinted gives the
reason instead.

The pipeline's :class:`~scrapy_neardup.fingerprints.prepare.Preparer` does the work, so a record
and a crawled item with the same text get the same fingerprint or the same reason.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterable

from ..engine.detector import Detector
from ..fingerprints.extract import DEFAULT_EXTRACTOR
from ..fingerprints.fingerprint import Fingerprint, Recipe
from ..fingerprints.prepare import NO_TEXT, NOT_ARTICLE, OK, Preparer
from ..interrupts import ignore_interrupts

# What a record's text becomes: its fingerprint or why it has none, and the text judged (the
# article body extracted from a record's HTML; None for a text, which the record holds already).
PreparedText = tuple[Fingerprint | str, str | None]


# A record's text to prepare: the text or the HTML, whether it is HTML, the record's key and site.
Source = tuple[str, bool, str, str]


def _prepare(preparer: Preparer, source: str, is_html: bool, key: str = "", site: str = "") -> PreparedText:
    prepared = preparer(source, is_html, key, site)
    if prepared.status == OK and prepared.fingerprint is not None:
        return prepared.fingerprint, prepared.text
    if is_html and prepared.status == NO_TEXT:
        return "no article text found in its HTML", None
    if prepared.status == NOT_ARTICLE:
        return f"the text extracted from its HTML is not an article ({prepared.error})", None
    if is_html and prepared.error:
        return f"its HTML could not be extracted ({prepared.error})", None
    return f"could not fingerprint ({prepared.error or 'no text'})", None


_WORKER: Preparer | None = None


def _start_worker(recipe: Recipe) -> None:
    global _WORKER
    ignore_interrupts()
    _WORKER = Preparer(recipe, DEFAULT_EXTRACTOR)


def _work(source: Source) -> PreparedText:
    assert _WORKER is not None
    return _prepare(_WORKER, *source)


def fingerprinting(
    args: argparse.Namespace, detector: Detector, stack: contextlib.ExitStack
) -> Callable[[list[Source]], Iterable[PreparedText]]:
    """(text or HTML, is_html, key, site) -> (fingerprint or reason, text extracted from HTML),
    in order; in worker processes with --workers. HTML is extracted as the crawl extracts it
    (with its site's own text taken out, :mod:`~scrapy_neardup.fingerprints.article`)."""
    if not args.workers:
        preparer = Preparer(detector.recipe, DEFAULT_EXTRACTOR)
        preparer.fingerprinter = detector.fingerprinter
        return lambda sources: [_prepare(preparer, *source) for source in sources]
    import concurrent.futures
    import multiprocessing

    pool = concurrent.futures.ProcessPoolExecutor(
        args.workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(detector.recipe,),
    )
    stack.callback(pool.shutdown)
    return lambda sources: pool.map(_work, sources, chunksize=16)
