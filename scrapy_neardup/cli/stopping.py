"""Ctrl-C and SIGTERM stop a command: the store is closed and a partial output file removed.

Both raise KeyboardInterrupt, but not inside :func:`stops_deferred` (a batch handed to the
store, and its lines written): there a stop is only recorded, and raised at the next line read,
so the lines the store took are written; a second stop raises at once. Both are also recorded, because Python drops an exception
raised while a finalizer runs (a generator closed on release): a stop that came then would be
lost, and a run reading a pipe left open would wait on it for ever. The input is read through
:func:`until_stopped`, which stops at the next line read after a stop, lost or not.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_requested = threading.Event()
_deferring = [0]  # how many stops_deferred blocks the main thread is in


@contextlib.contextmanager
def stops_as_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt and are recorded, while the block runs (in
    the main thread only, where Python delivers signals)."""
    _requested.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        if _deferring[0] and not _requested.is_set():
            _requested.set()  # raised at the next line read (until_stopped)
            return
        _requested.set()
        raise KeyboardInterrupt

    previous = {number: signal.signal(number, interrupt) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def stops_deferred() -> Iterator[None]:
    """A first stop coming while the block runs is recorded, not raised: what the block does
    (handing a batch to the store, writing the lines it decided) is done whole."""
    _deferring[0] += 1
    try:
        yield
    finally:
        _deferring[0] -= 1


def until_stopped(items: Iterable[T]) -> Iterator[T]:
    """The items, each read only while no stop was asked for."""
    iterator = iter(items)
    while True:
        if _requested.is_set():
            raise KeyboardInterrupt
        try:
            item = next(iterator)
        except StopIteration:
            return
        yield item
