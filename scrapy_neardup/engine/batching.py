"""Checking a stream of documents in batches, with fingerprinting overlapped with the store.

A shared store (Redis) takes a batch in one round trip (``Detector.start_many``): the batch is
sent, the next one is fingerprinted while the server works on it, and only then is the answer
read; the batch's duplicates go out with the next batch. One thread does it all: a second
thread fingerprinting ahead would only take turns with it at the GIL. A local store
(LevelDB) does its work when the batch is handed to it.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .detector import Detector
    from .verdicts import Verdict

T = TypeVar("T")


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items (the last one shorter)."""
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def ahead(batches: Iterator[T]) -> Iterator[T]:
    """The items of ``batches``, the next one computed in a thread while this one is used
    (for work done outside this process, such as waiting on worker processes)."""
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="neardup-ahead") as pool:
        upcoming = pool.submit(next, batches, None)
        while (batch := upcoming.result()) is not None:
            upcoming = pool.submit(next, batches, None)
            yield batch


def overlapped(batches: Iterable[T], start: Callable[[T], Callable[[], Iterable]]) -> Iterator:
    """For each batch, what ``start(batch)()`` gives, in order; ``start`` hands a batch over
    and returns the function that collects its result. The next batch is made (the
    iterator's work, such as fingerprinting) before the previous one is collected."""
    collect = None
    for batch in batches:
        if collect is not None:
            yield from collect()
        collect = start(batch)
    if collect is not None:
        yield from collect()


def check_texts(detector: Detector, documents: Iterable[tuple[str, str]], size: int = 64) -> Iterator[Verdict]:
    """Verdicts of ``(key, text)`` pairs, in order, checked ``size`` at a time."""

    def fingerprinted(batch: list[tuple[str, str]]) -> list:
        return [(key, detector.fingerprint(text)) for key, text in batch]

    return overlapped(map(fingerprinted, chunks(documents, size)), detector.start_many)
