"""Worker processes that prepare pages (:class:`~scrapy_neardup.fingerprints.prepare.Preparer`:
extraction and fingerprinting) beside the crawl, so the CPU work does not stall the reactor.

Only the store check stays in the crawler process: :meth:`WorkerPool.in_order` hands each
page's fingerprint to it in the order the pages arrived.
"""

from __future__ import annotations

import collections
import logging
import pickle
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..fingerprints.prepare import ERROR, TIMEOUT, Prepared
from ..workerpipes import (
    RESULTS_FD,
    TASKS_FD,
    framed,
    read_available,
    spawn_arguments,
    split_frames,
    unsent,
    widen_pipe,
    write_now,
    writev_now,
)
from .compat import installed_reactor, maybe_await, wait
from .worker_process import page_frame

if TYPE_CHECKING:
    from ..fingerprints.recipe import Recipe

logger = logging.getLogger(__name__)

T = TypeVar("T")
WORKER_MODULE = "scrapy_neardup.crawl.worker_process"  # a worker runs its serve()

# -- worker processes ----------------------------------------------------------------------


class WorkerDied(Exception):
    """The worker process preparing a page exited before answering (killed, out of memory)."""


class ExtractTimeout(Exception):
    """A page took its worker longer than the pool's time bound; the worker was killed."""


def can_pickle_extractor(extractor: Callable[[str], str] | str) -> bool:
    """Worker processes get the extractor by name: a dotted path, or a function that a new
    process can import (not one defined in the crawl script itself, ``__main__``)."""
    if isinstance(extractor, str):
        return True
    return getattr(extractor, "__module__", "__main__") != "__main__"


class _Worker:
    """One worker process and the pages it was given, answered in the order they were sent.

    A Twisted process protocol: the reactor watches the pipes, so handing a page over and
    getting its fingerprint back cost a write and a read in the reactor thread, without
    helper threads competing with the crawl for the GIL.
    """

    def __init__(self, pool: WorkerPool) -> None:
        reactor = installed_reactor()

        self.pool = pool
        self.pending: collections.deque = collections.deque()  # (Deferred, frame), oldest first
        self._deadline: Any = None  # the timer that checks the page being prepared (the oldest)
        self._started: float | None = None  # when that page's preparing began
        self.ready = False  # the process has loaded its tables (its first answer says so)
        self.alive = True
        self._buffer = bytearray()
        self.transport = reactor.spawnProcess(_protocol(self), **spawn_arguments(WORKER_MODULE))
        tasks = getattr(self.transport, "pipes", {}).get(TASKS_FD)
        sent = 0
        if tasks is not None:
            widen_pipe(tasks.fileno())
            # Written now, not when the reactor next runs (Scrapy starts it well after it
            # builds the pipeline): the worker loads its tables once it has the recipe.
            sent = write_now(tasks.fileno(), pool.init_frame)
        if sent < len(pool.init_frame):
            self.transport.writeToChild(TASKS_FD, pool.init_frame[sent:])

    def submit(self, frame: Sequence[bytes]) -> Any:
        """A Deferred for the answer to the page framed in the pieces ``frame``."""
        from twisted.internet.defer import Deferred

        answer: Deferred[Prepared] = Deferred()
        self.pending.append((answer, frame))
        fd = self._idle_pipe()
        for piece in unsent(frame, writev_now(fd, frame) if fd is not None else 0):
            self.transport.writeToChild(TASKS_FD, piece)
        if len(self.pending) == 1 and self.ready:
            self._start_clock()
        return answer

    def _idle_pipe(self) -> int | None:
        """The tasks pipe's descriptor while Twisted holds nothing to write to it: a page is
        then written at once, in one call, instead of joined into Twisted's buffer and written
        on the reactor's next turns. None otherwise (or when this Twisted's writer does not say),
        and the page goes through Twisted, after what it holds."""
        writer = getattr(self.transport, "pipes", {}).get(TASKS_FD)
        if writer is None or not getattr(writer, "connected", False) or getattr(writer, "disconnecting", True):
            return None
        if getattr(writer, "_writeDisconnected", True) or getattr(writer, "_tempDataLen", 1):
            return None
        if getattr(writer, "offset", -1) != len(getattr(writer, "dataBuffer", b"?")):
            return None
        return writer.fileno()

    def _start_clock(self) -> None:
        """The oldest page is the one being prepared: it has the pool's timeout from now.

        One timer a worker, armed when none is and re-armed when it fires early, instead of
        a timer set and cancelled in the reactor's schedule for every page."""
        if self.pool.timeout:
            reactor = installed_reactor()
            self._started = reactor.seconds()
            if self._deadline is None:
                self._deadline = reactor.callLater(self.pool.timeout, self._check_clock)

    def _stop_clock(self) -> None:
        self._started = None

    def _cancel_clock(self) -> None:
        self._started = None
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None

    def _check_clock(self) -> None:
        """The timer fired: the page being prepared overran, or the timer waits for it."""
        self._deadline = None
        if self._started is None or not self.alive or not self.pending:
            return
        assert self.pool.timeout  # the clock runs only with a timeout
        left = self._started + self.pool.timeout - installed_reactor().seconds()
        if left > 0:
            self._deadline = installed_reactor().callLater(left, self._check_clock)
        else:
            self._overrun()

    def _overrun(self) -> None:
        """The page being prepared took too long: kill the worker, fail that page, and give
        the pages queued behind it to the other workers."""
        self._started = None
        if not self.alive or not self.pending:
            return
        self.alive = False
        (answer, _), queued = self.pending.popleft(), list(self.pending)
        self.pending = collections.deque()
        try:
            self.transport.signalProcess("KILL")
        except Exception:  # it exited meanwhile
            pass
        answer.errback(ExtractTimeout(f"preparing the page took over {self.pool.timeout:g} s; its worker was replaced"))
        for waiting, frame in queued:
            self.pool.resend(frame).chainDeferred(waiting)

    def received(self, data: bytes) -> None:
        self._buffer += data
        for payload in split_frames(self._buffer):
            if not self.ready:  # start-up is not counted against the first page
                self.ready = True
                if self.pending:
                    self._start_clock()
                continue
            answer, _ = self.pending.popleft()
            self._stop_clock()
            if self.pending:
                self._start_clock()
            try:
                prepared = pickle.loads(payload)
            except Exception as exc:  # never expected: the worker pickled a Prepared
                answer.errback(exc)
            else:
                answer.callback(prepared)

    def died(self, reason: str) -> None:
        """Every page still waiting on this worker fails; later pages go to a new worker."""
        if not self.alive:
            return
        self.alive = False
        self._cancel_clock()
        pending, self.pending = self.pending, collections.deque()
        for answer, _ in pending:
            answer.errback(WorkerDied(f"the worker process stopped before answering ({reason})"))

    def close(self) -> None:
        self._cancel_clock()
        if self.alive:
            self.alive = False
            self.transport.closeChildFD(TASKS_FD)  # end of input: the worker exits


def _protocol(worker: _Worker) -> Any:
    """The process protocol of ``worker``. Twisted is imported here, not with the module, as
    the reactor is installed by whoever runs the crawl (compat.installed_reactor)."""
    from twisted.internet.protocol import ProcessProtocol

    class WorkerProtocol(ProcessProtocol):
        """Passes what the reactor sees of a worker process on to its :class:`_Worker`."""

        def childDataReceived(self, fd: int, data: bytes) -> None:
            if fd == RESULTS_FD:
                pipe = getattr(self.transport, "pipes", {}).get(fd)
                worker.received(data + read_available(pipe.fileno()) if pipe is not None else data)

        def childConnectionLost(self, fd: int) -> None:
            if fd == RESULTS_FD:
                worker.died("its pipe closed")

        def processExited(self, reason: Any) -> None:
            worker.died(f"exited ({reason.value})")

        def processEnded(self, reason: Any) -> None:
            worker.died(f"ended ({reason.value})")

    return WorkerProtocol()


class WorkerPool:
    """Worker processes that each hold a :class:`Preparer` for the same recipe.

    Workers are new Python processes running :func:`~.worker_process.serve`, not forks of the crawler: they
    never import the crawl script, so any script works. Each page goes to the worker with the
    fewest pages waiting; each worker answers in order.
    """

    def __init__(
        self,
        size: int,
        recipe: Recipe,
        extractor: Callable[[str], str] | str,
        niceness: int = 0,
        timeout: float | None = None,
        send_text: bool = True,
    ):
        self.size = size
        self.timeout = timeout  # seconds a page may take its worker; None: no bound
        # Without send_text a page's extracted body stays in the worker: the crawler reads only
        # the fingerprint back, which it can do faster than a worker writes.
        self.init_frame = framed((recipe, extractor, niceness, send_text))
        self._workers = [_Worker(self) for _ in range(size)]
        self._tail: Any = None  # Deferred fired when the last page in arrival order is judged
        self._retry_lock: Any = None  # one page at a time after a worker died
        self._told_died = False

    async def in_order(
        self,
        source: str | bytes,
        is_html: bool,
        judge: Callable[[Prepared], Awaitable[T]],
        key: str = "",
        site: str = "",
        title: str | None = None,
    ) -> T:
        """``judge(prepared)`` of this page, called once every page that arrived before it was
        judged: pages are prepared side by side, and their fingerprints checked in arrival
        order, as the reactor-thread path checks them."""
        from twisted.internet.defer import Deferred

        before, mine = self._tail, Deferred[None]()
        self._tail = mine
        try:
            prepared = await self.prepare(source, is_html, key, site, title)
            if before is not None and not before.called:
                await wait(before)
            return await maybe_await(judge(prepared))
        finally:
            if self._tail is mine:
                self._tail = None
            mine.callback(None)

    async def prepare(
        self, source: str | bytes, is_html: bool, key: str = "", site: str = "", title: str | None = None
    ) -> Prepared:
        """The prepared page; a page whose worker died is tried once more, alone, on a new
        worker, so that one bad page costs one item. Never raises: ERROR instead."""
        try:
            try:
                return await wait(self.submit(source, is_html, key, site, title))
            except ExtractTimeout as exc:
                return Prepared(TIMEOUT, error=str(exc))
            except WorkerDied as exc:
                if not self._told_died:
                    self._told_died = True
                    logger.warning("A worker process died (%s); retrying its pages one at a time", exc)
                if self._retry_lock is None:
                    from twisted.internet.defer import DeferredLock

                    self._retry_lock = DeferredLock()
                await wait(self._retry_lock.acquire())
                try:
                    return await wait(self.submit(source, is_html, key, site, title))
                finally:
                    self._retry_lock.release()
        except ExtractTimeout as exc:  # on its second try
            return Prepared(TIMEOUT, error=str(exc))
        except Exception as exc:  # the pool itself failed (a worker was killed twice)
            return Prepared(ERROR, error=f"{type(exc).__name__}: {exc}")

    def submit(
        self, source: str | bytes, is_html: bool, key: str = "", site: str = "", title: str | None = None
    ) -> Any:
        """A Deferred that fires with the :class:`Prepared` page, or fails with WorkerDied
        or ExtractTimeout."""
        return self.resend(page_frame(source, is_html, key, site, title))

    def resend(self, frame: Sequence[bytes]) -> Any:
        """Hand a framed page to the live worker with the fewest pages waiting."""
        for index, worker in enumerate(self._workers):
            if not worker.alive:
                self._workers[index] = _Worker(self)
        worker = min(self._workers, key=lambda w: len(w.pending))
        return worker.submit(frame)

    def close(self) -> None:
        for worker in self._workers:
            worker.close()
