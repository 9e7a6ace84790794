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
import os
import pickle
import struct
import sys
from collections import deque
from typing import Any

from twisted.internet import defer
from twisted.internet import reactor as installed_reactor
from twisted.internet.protocol import ProcessProtocol

from ..fingerprints.fingerprint import Fingerprint, Recipe
from .fingerprint_worker import RESULTS_FD, TASKS_FD

reactor: Any = installed_reactor  # the reactor's interfaces do not type its methods

logger = logging.getLogger(__name__)

# multiprocessing.connection's framing, which the worker reads and writes: a signed 32-bit
# length (-1 then an unsigned 64-bit one for 2 GiB and more), then the bytes.
SHORT, LONG = struct.Struct("!i"), struct.Struct("!Q")

# Not "-m": pickled classes must name their modules. "-c" puts the current folder first on the
# path, ahead of PYTHONPATH (the service's path, in its order), so that entry goes.
WORKER_COMMAND = (
    "import sys\n"
    "if sys.path[:1] == ['']: del sys.path[0]\n"
    "from scrapy_neardup.serve.fingerprint_worker import serve; serve()"
)


class WorkerFailed(Exception):
    """The worker gave no fingerprint for a text: the service makes it itself."""


def frame(obj: Any) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    head = SHORT.pack(len(data)) if len(data) <= 0x7FFFFFFF else SHORT.pack(-1) + LONG.pack(len(data))
    return head + data


class _Worker(ProcessProtocol):
    """One worker process; its answers come in the order the texts were sent."""

    def __init__(self, recipe: Recipe):
        self.pending: deque[defer.Deferred] = deque()
        self.alive = True
        self.ready = False
        self._buffer = bytearray()
        path = os.pathsep.join(entry or os.getcwd() for entry in sys.path)
        self.process: Any = reactor.spawnProcess(  # the transport, typed as a process's
            self,
            sys.executable,
            [sys.executable, "-c", WORKER_COMMAND],
            env={**os.environ, "PYTHONPATH": path},
            childFDs={1: 1, 2: 2, TASKS_FD: "w", RESULTS_FD: "r"},
        )
        self.process.writeToChild(TASKS_FD, frame(recipe))

    def submit(self, text: str, title: str | None) -> defer.Deferred:
        answer: defer.Deferred = defer.Deferred()
        self.pending.append(answer)
        self.process.writeToChild(TASKS_FD, frame((text, title)))
        return answer

    def childDataReceived(self, fd: int, data: bytes) -> None:
        if fd != RESULTS_FD:
            return
        buffer = self._buffer
        buffer += data
        pipe = getattr(self.process, "pipes", {}).get(fd)
        while pipe is not None:  # the rest too: Twisted reads 8 KiB a turn of the reactor
            try:
                more = os.read(pipe.fileno(), 1 << 16)
            except OSError:  # empty for now (EAGAIN), or closed: Twisted's next read says so
                break
            if not more:
                break
            buffer += more
        while len(buffer) >= SHORT.size:
            (length,) = SHORT.unpack_from(buffer)
            start = SHORT.size
            if length < 0:
                if len(buffer) < SHORT.size + LONG.size:
                    return
                (length,) = LONG.unpack_from(buffer, SHORT.size)
                start += LONG.size
            if len(buffer) < start + length:
                return
            result = pickle.loads(buffer[start : start + length])
            del buffer[: start + length]
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
