"""Fingerprints for the texts of a batch of lines, in this process or, with ``--workers``, in a
pool of worker processes; a text that cannot be fingerprinted gives the reason instead."""

from __future__ import annotations

import argparse
import contextlib
from typing import Callable, Iterable

from ..engine.detector import Detector
from ..fingerprints.fingerprint import Fingerprint, Fingerprinter, Recipe


def _fingerprint_or_error(fingerprinter: Fingerprinter, text: str) -> Fingerprint | str:
    try:
        return fingerprinter.fingerprint(text)
    except Exception as exc:  # a text the engine cannot handle must not stop the run
        return f"could not fingerprint ({type(exc).__name__}: {exc})"


_WORKER: Fingerprinter | None = None


def _start_worker(recipe: Recipe) -> None:
    global _WORKER
    _WORKER = Fingerprinter(recipe)


def _work(text: str) -> Fingerprint | str:
    assert _WORKER is not None
    return _fingerprint_or_error(_WORKER, text)


def fingerprinting(
    args: argparse.Namespace, detector: Detector, stack: contextlib.ExitStack
) -> Callable[[list[str]], Iterable[Fingerprint | str]]:
    """texts -> fingerprints (or error strings), in order; in worker processes with --workers."""
    if not args.workers:
        return lambda texts: [_fingerprint_or_error(detector.fingerprinter, t) for t in texts]
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
