"""The body of a fingerprint worker process of ``neardup serve`` (:mod:`.fingerprinting` starts
it): the recipe first, then ``(text, title)`` pairs in on one pipe, their fingerprints out on
another, in order, each a pickle framed as :mod:`~scrapy_neardup.workerpipes` frames them.

It imports neither Twisted nor the store: only what a fingerprint needs, so that it starts fast.
"""

from __future__ import annotations

import os
import pickle
import signal

from ..interrupts import ignore_interrupts
from ..workerpipes import open_pipes, read_frame, send


def serve() -> None:
    """Fingerprint texts until the tasks pipe is closed: the service stopped, or was killed.
    Stopping is the service's to decide: a Ctrl-C in the terminal, or a SIGTERM sent to the
    whole group (as systemd does), must not end the worker while the service answers the
    checks in flight."""
    ignore_interrupts()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from ..fingerprints.fingerprint import Fingerprinter

    tasks, results = open_pipes()
    try:
        recipe = read_frame(tasks)
        if recipe is not None:
            fingerprinter = Fingerprinter(pickle.loads(recipe))
            fingerprinter.fingerprint("载入分词词典，让第一个请求不必等待。" * 3)
            send(results, None)  # ready
            while (payload := read_frame(tasks)) is not None:
                text, title = pickle.loads(payload)
                try:
                    send(results, fingerprinter.fingerprint(text, title))
                except Exception as exc:  # the service fingerprints this text itself, and says why
                    send(results, f"{type(exc).__name__}: {exc}")
    except BrokenPipeError:
        pass
    os._exit(0)  # the service closed its ends: not sys.exit, whose flush could fail again
