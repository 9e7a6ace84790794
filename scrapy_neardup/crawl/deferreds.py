"""Awaiting Twisted Deferreds from coroutines, under the asyncio reactor and the others alike."""

from __future__ import annotations

from typing import Any


async def wait(deferred: Any) -> Any:
    """What ``deferred`` fires with (or raises what it fails with)."""
    from scrapy.utils.defer import maybe_deferred_to_future

    return await maybe_deferred_to_future(deferred)


async def maybe_await(value: Any) -> Any:
    """``value``, or what it gives when it is a Deferred or another awaitable."""
    from twisted.internet.defer import Deferred

    if isinstance(value, Deferred):
        return await wait(value)
    if hasattr(value, "__await__"):
        return await value
    return value
