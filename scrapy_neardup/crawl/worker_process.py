"""The body of a worker process (:class:`~.workers.WorkerPool` starts them): pages in on one
pipe (:func:`page_frame`), prepared fingerprints out on another (framed pickles, as
:mod:`~scrapy_neardup.workerpipes` frames them).

It imports neither Scrapy nor Twisted: their import would be a good part of a worker's start,
which the crawl's first item waits for.
"""

from __future__ import annotations

import os
import pickle
from typing import TYPE_CHECKING

from ..interrupts import ignore_interrupts
from ..workerpipes import LENGTH, open_pipes, read_frame, send

if TYPE_CHECKING:
    from ..fingerprints.prepare import Preparer


def page_frame(
    source: str | bytes, is_html: bool, key: str, site: str, title: str | None = None
) -> tuple[bytes, bytes]:
    """A page as one message, in two pieces written one after the other: its length and its
    other fields pickled, then the page itself as bytes, not pickled (a str encoded once, lone
    surrogates kept) and not copied into one buffer. Pickling a str leaves its UTF-8 form
    cached in it, a second copy of the page held as long as the item."""
    is_str = isinstance(source, str)
    body = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    fields = pickle.dumps((is_str, is_html, key, site, title), protocol=pickle.HIGHEST_PROTOCOL)
    size = LENGTH.size + len(fields) + len(body)
    return LENGTH.pack(size) + LENGTH.pack(len(fields)) + fields, body


def read_page(payload: bytes) -> tuple[str | bytes, bool, str, str, str | None]:
    """The page and its fields back from a :func:`page_frame` message (without its length)."""
    (size,) = LENGTH.unpack_from(payload)
    is_str, is_html, key, site, title = pickle.loads(payload[LENGTH.size : LENGTH.size + size])
    body = memoryview(payload)[LENGTH.size + size :]
    return (str(body, "utf-8", "surrogatepass") if is_str else bytes(body)), is_html, key, site, title


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

    tasks, results = open_pipes()
    preparer: Preparer | None = None
    send_text = True
    while (payload := read_frame(tasks)) is not None:
        if preparer is None:
            recipe, extractor, niceness, send_text = pickle.loads(payload)
            if niceness and hasattr(os, "nice"):
                os.nice(niceness)
            preparer = Preparer(recipe, extractor)
            preparer.warm_up()
            send(results, None)  # ready
            continue
        prepared = preparer(*read_page(payload))
        if not send_text:
            prepared.text = None
        send(results, prepared)
