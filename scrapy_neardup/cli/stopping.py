"""Ctrl-C and SIGTERM stop a command: the store is closed and a partial output file removed.

Both raise KeyboardInterrupt, and both are also recorded, because Python drops an exception
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


@contextlib.contextmanager
def stops_as_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt and are recorded, while the block runs (in
    the main thread only, where Python delivers signals)."""
    _requested.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        _requested.set()
        raise KeyboardInterrupt

    previous = {number: signal.signal(number, interrupt) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


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
