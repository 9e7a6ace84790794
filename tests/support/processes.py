"""Processes that race on one store: separate Python processes, forked from a server process
that has imported the package once, instead of each importing it again (``spawn``)."""

from __future__ import annotations

import multiprocessing
from multiprocessing.context import BaseContext

# Imported once by the server process; each racer forks from it with these already loaded.
PRELOAD = ["pytest", "redis", "scrapy_neardup", "scrapy_neardup.engine.prefer", "scrapy_neardup.stores.redis"]


def racing_processes() -> BaseContext:
    """The multiprocessing context for racers: ``forkserver`` with the package preloaded.

    Each racer is a process of its own, with its own store connection, forked from a server
    process that holds no connection or thread of the test's: what the racers share is the store.
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context
