"""The pace of a purge that runs beside checks (``Store.purge(..., background=True)``).

A purge beside checks, in a thread of the crawler (LevelDB) or in a process beside crawlers
that share the store (Redis Cluster), works in batches and rests after each for as long as the
batch took times ``1 / share - 1``: it is busy about ``share`` of the time, and the checks keep
the rest. The batch is timed on the wall clock, so what it costs the servers (a Redis call
waits for them) is paced as well as what it costs this process.
"""

from __future__ import annotations

import threading
import time

__all__ = ["BACKGROUND_SHARE", "Pace"]

BACKGROUND_SHARE = 0.05  # of the time a purge beside checks is busy


class Pace:
    """Rests between the batches of one purge; ``stop`` set ends the rest (and the purge)."""

    def __init__(self, stop: threading.Event | None = None, share: float = BACKGROUND_SHARE):
        if not 0 < share <= 1:
            raise ValueError(f"share must be above 0 and at most 1, got {share}")
        self.share = share
        self.stop = stop if stop is not None else threading.Event()
        self._began = time.perf_counter()

    def rest(self) -> bool:
        """Rest after a batch (timed from the last rest, or from the start); False when
        ``stop`` was set."""
        busy = time.perf_counter() - self._began
        stopped = self.stop.wait(busy * (1 / self.share - 1))
        self._began = time.perf_counter()
        return not stopped
