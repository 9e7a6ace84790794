"""Fingerprints of checked texts made in worker processes, beside the service's reactor thread.

A check's fingerprint (the tokenizer, site notices, story words, the C kernel) is a third of
its CPU and needs no store: made in a worker process, it leaves the reactor thread free to
answer other requests meanwhile, so one service uses a second core. The worker holds only a
:class:`~..fingerprints.fingerprint.Fingerprinter` of the store's recipe, so its fingerprint is
the one the service would make. Whatever goes wrong (the worker died, could not start, failed
on a text) the caller makes the fingerprint itself: a check is never lost to a worker.
"""

from __future__ import annotations

import logging
import pickle
from collections import deque
from typing import Any

from twisted.internet import defer
from twisted.internet import reactor as installed_reactor
from twisted.internet.protocol import ProcessProtocol

from ..fingerprints.fingerprint import Fingerprint, Recipe
from ..workerpipes import RESULTS_FD, TASKS_FD, framed, read_available, spawn_arguments, split_frames

reactor: Any = installed_reactor  # the reactor's interfaces do not type its methods

logger = logging.getLogger(__name__)

WORKER_MODULE = "scrapy_neardup.serve.fingerprint_worker"  # a worker runs its serve()


class WorkerFailed(Exception):
    """The worker gave no fingerprint for a text: the service makes it itself."""


class _Worker(ProcessProtocol):
    """One worker process; its answers come in the order the texts were sent."""

    def __init__(self, recipe: Recipe):
        self.pending: deque[defer.Deferred] = deque()
        self.alive = True
        self.ready = False
        self._buffer = bytearray()
        self.process: Any = reactor.spawnProcess(self, **spawn_arguments(WORKER_MODULE))  # typed as a process's
        self.process.writeToChild(TASKS_FD, framed(recipe))

    def submit(self, text: str, title: str | None) -> defer.Deferred:
        message = framed((text, title))  # first: a text too long to frame is made by the caller
        answer: defer.Deferred = defer.Deferred()
        self.pending.append(answer)
        self.process.writeToChild(TASKS_FD, message)
        return answer

    def childDataReceived(self, fd: int, data: bytes) -> None:
        if fd != RESULTS_FD:
            return
        self._buffer += data
        pipe = getattr(self.process, "pipes", {}).get(fd)
        if pipe is not None:
            self._buffer += read_available(pipe.fileno())
        for payload in split_frames(self._buffer):
            result = pickle.loads(payload)
            if not self.ready:
                self.ready = True  # its first message: the tables are loaded
                continue
            answer = self.pending.popleft()
            if isinstance(result, Fingerprint):
                answer.callback(result)
            else:
                answer.errback(WorkerFailed(f"the fingerprint worker failed on a text: {result}"))

    def childConnectionLost(self, fd: int) -> None:
        if fd == RESULTS_FD:
            self._died("its pipe closed")

    def processEnded(self, reason: Any) -> None:
        self._died(f"it ended ({reason.value})")

    def _died(self, reason: str) -> None:
        if not self.alive:
            return
        self.alive = False
        pending, self.pending = self.pending, deque()
        logger.warning("a fingerprint worker stopped (%s); %d texts fingerprinted here instead", reason, len(pending))
        for answer in pending:
            answer.errback(WorkerFailed(f"the fingerprint worker stopped: {reason}"))

    def close(self) -> None:
        if self.alive:
            self.alive = False
            self.process.closeChildFD(TASKS_FD)  # end of input: the worker exits


class FingerprintWorkers:
    """``size`` worker processes; each text goes to the live one with the fewest waiting. A
    worker that died after it started is replaced for the next text; one that died starting
    is not (it would again): the service then makes the fingerprints itself."""

    def __init__(self, size: int, recipe: Recipe):
        self.recipe = recipe
        self._workers = [_Worker(recipe) for _ in range(size)]

    def fingerprint(self, text: str, title: str | None) -> defer.Deferred | None:
        """A Deferred firing with the fingerprint of ``text`` or failing with WorkerFailed;
        None when no worker is left."""
        self._workers = [w if w.alive else _Worker(self.recipe) for w in self._workers if w.alive or w.ready]
        if not self._workers:
            return None
        return min(self._workers, key=lambda w: len(w.pending)).submit(text, title)

    def close(self) -> None:
        for worker in self._workers:
            worker.close()
