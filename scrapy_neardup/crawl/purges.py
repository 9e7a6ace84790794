"""The time window's purges during a crawl (``NEARDUP_TTL``).

Documents older than the window are purged when the spider opens. A store that can purge in
a thread of its own (``Store.purges_in_background``: LevelDB) does it there, so the crawl
starts at once and goes on while a large store is purged, and again every
``ttl / 4`` while the spider runs, so a long crawl keeps at most 1.25 windows of documents
(as Redis, whose keys expire by themselves). Other stores purge once, at open, in place. The
detector matches no document older than its window, so verdicts do not wait for a purge.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..stores import StoreError
from .runlog import RunLog

if TYPE_CHECKING:
    from twisted.internet.defer import Deferred
    from twisted.internet.task import LoopingCall

    from .storeaccess import StoreAccess

__all__ = ["Purges"]

PURGES_PER_TTL = 4


class Purges:
    """The purges of one pipeline's store; :meth:`stop` when the spider closes."""

    def __init__(self, access: StoreAccess, log: RunLog):
        self.access = access
        self.log = log
        self.ttl = access.detector.ttl
        self.background = access.store.purges_in_background
        self.running: Deferred[int] | None = None  # a purge in its thread
        self._loop: LoopingCall | None = None

    def start(self) -> None:
        if not self.ttl:
            return
        if not self.background:
            try:
                self.log.inc("purged", self.access.purge())
            except StoreError as exc:
                self._failed(exc)
            return
        from twisted.internet.task import LoopingCall

        self._loop = LoopingCall(self._purge_in_thread)
        self._loop.start(self.ttl / PURGES_PER_TTL, now=True).addErrback(self._failed)

    def _purge_in_thread(self) -> None:
        if self.running is not None:
            return  # the last one is still at it
        from twisted.internet.threads import deferToThread

        self.running = deferToThread(self.access.purge, True)
        self.running.addCallbacks(lambda removed: self.log.inc("purged", removed), self._failed)
        self.running.addBoth(self._done)

    def _done(self, _: Any) -> None:
        self.running = None

    def _failed(self, failure: Any) -> None:
        problem = getattr(failure, "value", failure)
        self.log.once("purge", logging.WARNING, "Could not purge old documents: %s", problem)

    def stop(self) -> None:
        """No more purges; one in its thread stops at its next batch when the store closes."""
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self._loop = None
