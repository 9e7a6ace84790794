"""The body of a worker process (:class:`~.workers.WorkerPool` starts them): pages in on one
pipe, prepared fingerprints out on another, each a length-prefixed pickle.

It imports neither Scrapy nor Twisted: their import would be a good part of a worker's start,
which the crawl's first item waits for.
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import TYPE_CHECKING, Any

from ..interrupts import ignore_interrupts

if TYPE_CHECKING:
    from ..fingerprints.prepare import Preparer

TASKS_FD = 3  # in a worker: pages come in on this descriptor
RESULTS_FD = 4  # and prepared fingerprints go out on this one
LENGTH = struct.Struct(">I")


def framed(obj: Any) -> bytes:
    """``obj`` pickled, after its length: one message on a worker's pipes."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return LENGTH.pack(len(data)) + data


def _read_exactly(stream: Any, size: int) -> bytes | None:
    data = stream.read(size)
    return data if data is not None and len(data) == size else None


def serve() -> None:
    """Body of a worker process: prepare pages from the tasks pipe until it is closed. A crawl
    that ended while the worker was starting (an empty crawl) closed the results pipe: the
    worker leaves quietly, without a traceback on the crawl's stderr."""
    ignore_interrupts()
    try:
        _serve()
    except BrokenPipeError:
        os._exit(0)  # not sys.exit: flushing the closed pipe at exit would fail once more


def _serve() -> None:
    from ..fingerprints.prepare import Preparer  # after ignore_interrupts: it takes a while

    tasks = os.fdopen(TASKS_FD, "rb")
    results = os.fdopen(RESULTS_FD, "wb")
    preparer: Preparer | None = None
    send_text = True
    while True:
        head = _read_exactly(tasks, LENGTH.size)
        if head is None:
            return
        payload = _read_exactly(tasks, LENGTH.unpack(head)[0])
        if payload is None:
            return
        if preparer is None:
            recipe, extractor, niceness, send_text = pickle.loads(payload)
            if niceness and hasattr(os, "nice"):
                os.nice(niceness)
            preparer = Preparer(recipe, extractor)
            results.write(framed(None))  # ready
            results.flush()
            continue
        source, is_html, key, site = pickle.loads(payload)
        prepared = preparer(source, is_html, key, site)
        if not send_text:
            prepared.text = None
        results.write(framed(prepared))
        results.flush()
