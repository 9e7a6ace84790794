"""Fingerprints for the texts of a batch of lines, in this process or, with ``--workers``, in a
pool of worker processes; a text that cannot be fingerprinted gives the reason instead.

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
from ..fingerprints.prepare import OK, Preparer


def _fingerprint_or_reason(preparer: Preparer, text: str) -> Fingerprint | str:
    prepared = preparer(text, is_html=False)
    if prepared.status == OK and prepared.fingerprint is not None:
        return prepared.fingerprint
    return f"could not fingerprint ({prepared.error or 'no text'})"


_WORKER: Preparer | None = None


def _start_worker(recipe: Recipe) -> None:
    global _WORKER
    _WORKER = Preparer(recipe, DEFAULT_EXTRACTOR)


def _work(text: str) -> Fingerprint | str:
    assert _WORKER is not None
    return _fingerprint_or_reason(_WORKER, text)


def fingerprinting(
    args: argparse.Namespace, detector: Detector, stack: contextlib.ExitStack
) -> Callable[[list[str]], Iterable[Fingerprint | str]]:
    """texts -> fingerprints (or reasons), in order; in worker processes with --workers."""
    if not args.workers:
        preparer = Preparer(detector.recipe, DEFAULT_EXTRACTOR)
        preparer.fingerprinter = detector.fingerprinter
        return lambda texts: [_fingerprint_or_reason(preparer, text) for text in texts]
    import concurrent.futures
    import multiprocessing

    pool = concurrent.futures.ProcessPoolExecutor(
        args.workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(detector.recipe,),
    )
    stack.callback(pool.shutdown)
    return lambda texts: pool.map(_work, texts, chunksize=16)
