"""Store calls that never block the reactor, and a circuit breaker for a store that is down.

A network store (Redis) is called on one thread of its own: a lost server costs that
thread its timeouts and retries, never the crawl. One thread keeps the calls in the order
they were made, which the pipeline's rules rely on (a copy is checked after the first copy's
commit or release). A local store (memory, LevelDB) answers in microseconds and is called
inline: handing each call to a thread would cost more than it does.

Once a call finds the store unreachable (``StoreUnavailable``), the store is *down*: calls
made meanwhile fail at once with :class:`StoreDown`, without waiting on the server, until a
back-off has passed; then one call tries the store again. The back-off doubles after each
failed try, up to :data:`MAX_BACKOFF` seconds: short, since the crawl's items wait for the
store (:meth:`StoreCalls.wait_to_retry`) and should go on soon after it answers again. An
outage longer than ``down_timeout`` seconds is given up on: the caller stops the crawl.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ..stores import StoreUnavailable
from ..stores.errors import StoreLost
from .compat import installed_reactor

logger = logging.getLogger(__name__)

__all__ = ["FIRST_BACKOFF", "MAX_BACKOFF", "StoreCalls", "StoreDown"]

FIRST_BACKOFF = 0.5  # seconds before the first new try once the store is down
MAX_BACKOFF = 5.0
WAKE_EVERY = 0.25  # seconds between two looks at whether a waiting caller should give up


class StoreDown(StoreUnavailable):
    """The store is known to be down: the call was not made."""


class StoreCalls:
    """Calls to one store, in order: on a dedicated thread (``threaded``) or inline.

    :meth:`run` gives the call's result (inline), or a Deferred of it (threaded); either
    way a call fails with :class:`StoreDown` while the store is known to be down.
    """

    def __init__(
        self,
        describe: str,
        threaded: bool,
        down_timeout: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.describe = describe
        self.threaded = threaded
        self.down_timeout = down_timeout
        self.clock = clock
        self.outages = 0  # how often the store was found down
        self._retry_at: float | None = None  # while down: when the next call may try the store
        self._backoff = FIRST_BACKOFF
        self._down_since = 0.0
        self._lock = threading.Lock()
        self._pool: Any = None
        if threaded:
            reactor = installed_reactor()
            from twisted.python.threadpool import ThreadPool

            self._pool = ThreadPool(1, 1, name="neardup-store")
            self._pool.start()
            # Stopped by close(); the trigger covers a crawl that ends without closing the store.
            reactor.addSystemEventTrigger("during", "shutdown", self._stop, self._pool)

    @property
    def down(self) -> bool:
        """The store is known down and its back-off has not passed yet."""
        retry_at = self._retry_at
        return retry_at is not None and self.clock() < retry_at

    def down_for(self) -> float:
        """Seconds since the store was found down (0 while it answers)."""
        return self.clock() - self._down_since if self._retry_at is not None else 0.0

    @property
    def given_up(self) -> bool:
        """The store has been down for ``down_timeout`` seconds or more."""
        return self._retry_at is not None and self.down_for() >= self.down_timeout

    async def wait_to_retry(self, closing: Callable[[], bool] = lambda: False) -> bool:
        """Wait until the store may be tried again: True then (or when another call found it
        back meanwhile), False once the outage has lasted ``down_timeout`` seconds or
        ``closing()`` says the crawl is closing, without waiting further."""
        reactor = installed_reactor()
        from twisted.internet.task import deferLater

        from .compat import wait

        while True:
            retry_at = self._retry_at
            if retry_at is None:
                return True
            if closing() or self.given_up:
                return False
            now = self.clock()
            if now >= retry_at:
                return True
            left = min(retry_at, self._down_since + self.down_timeout) - now
            await wait(deferLater(reactor, min(left, WAKE_EVERY), lambda: None))

    def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` as a store call: its result, or a Deferred of it when threaded."""
        if self.down:  # fail at once, even before queueing behind a slow call
            if self._pool is None:
                raise StoreDown(self._down_message())
            from twisted.internet.defer import fail

            return fail(StoreDown(self._down_message()))
        if self._pool is None:
            return self._guarded(function, *args)
        reactor = installed_reactor()
        from twisted.internet.threads import deferToThreadPool

        return deferToThreadPool(reactor, self._pool, self._guarded, function, *args)

    def _guarded(self, function: Callable[..., Any], *args: Any) -> Any:
        if self.down:  # found down while this call waited its turn
            raise StoreDown(self._down_message())
        try:
            result = function(*args)
        except (StoreDown, StoreLost):  # lost data is not an outage: the pipeline stops the crawl
            raise
        except StoreUnavailable as exc:
            self._went_down(exc)
            raise
        if self._retry_at is not None:
            self._came_back()
        return result

    def _went_down(self, exc: BaseException) -> None:
        with self._lock:
            if self._retry_at is None:
                self.outages += 1
                self._down_since = self.clock()
                self._backoff = FIRST_BACKOFF
                logger.error(
                    "scrapy-neardup: store %s is down (%s); items wait for it, tried again every "
                    "%g-%g s, for up to %g s (NEARDUP_STORE_DOWN_TIMEOUT); then the crawl stops",
                    self.describe,
                    exc,
                    FIRST_BACKOFF,
                    MAX_BACKOFF,
                    self.down_timeout,
                )
            else:
                self._backoff = min(MAX_BACKOFF, self._backoff * 2)
            self._retry_at = self.clock() + self._backoff

    def _came_back(self) -> None:
        with self._lock:
            if self._retry_at is not None:
                self._retry_at = None
                logger.warning(
                    "scrapy-neardup: store %s answers again after %.1f s; the items that waited are checked",
                    self.describe,
                    self.clock() - self._down_since,
                )

    def _down_message(self) -> str:
        return f"store {self.describe} is down; trying again in {max(0.0, (self._retry_at or 0) - self.clock()):.1f} s"

    def close(self, last: Callable[[], Any] | None = None) -> Any:
        """Run ``last`` (closing the store) after every call made before, then stop the thread.

        Threaded: a Deferred that fires when done; inline: None.
        """
        if self._pool is None:
            if last is not None:
                last()
            return None
        reactor = installed_reactor()
        from twisted.internet.threads import deferToThreadPool

        pool, self._pool = self._pool, None
        done = deferToThreadPool(reactor, pool, last or (lambda: None))
        done.addBoth(lambda result: (self._stop(pool), result)[1])
        return done

    @staticmethod
    def _stop(pool: Any) -> None:
        if pool.started:
            pool.stop()
