"""The body of a fingerprint worker process of ``neardup serve`` (:mod:`.fingerprinting` starts
it): the recipe first, then ``(text, title)`` pairs in on one pipe, their fingerprints out on
another, in order, each a pickle framed by :mod:`multiprocessing.connection`.

It imports neither Twisted nor the store: only what a fingerprint needs, so that it starts fast.
"""

from __future__ import annotations

import os
import signal
from multiprocessing.connection import Connection

from ..interrupts import ignore_interrupts

TASKS_FD = 3  # in the worker: texts come in on this descriptor
RESULTS_FD = 4  # and fingerprints go out on this one


def serve() -> None:
    """Fingerprint texts until the tasks pipe is closed: the service stopped, or was killed.
    Stopping is the service's to decide: a Ctrl-C in the terminal, or a SIGTERM sent to the
    whole group (as systemd does), must not end the worker while the service answers the
    checks in flight."""
    ignore_interrupts()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from ..fingerprints.fingerprint import Fingerprinter

    tasks = Connection(TASKS_FD, writable=False)
    results = Connection(RESULTS_FD, readable=False)
    try:
        fingerprinter = Fingerprinter(tasks.recv())
        fingerprinter.fingerprint("载入分词词典，让第一个请求不必等待。" * 3)
        results.send(None)  # ready
        while True:
            text, title = tasks.recv()
            try:
                results.send(fingerprinter.fingerprint(text, title))
            except Exception as exc:  # the service fingerprints this text itself, and says why
                results.send(f"{type(exc).__name__}: {exc}")
    except (EOFError, BrokenPipeError):
        os._exit(0)  # the service closed its ends: not sys.exit, whose flush would fail again
