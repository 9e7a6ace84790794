"""Scrapy and Twisted across the versions we support (Scrapy 2.11 to 2.19): every switch on a
version, and the awaiting of Deferreds from coroutines, in one place.

The rest of the crawl side calls these functions and never asks which version runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import version_info
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future

if TYPE_CHECKING:
    from scrapy.core.engine import ExecutionEngine
    from scrapy.crawler import Crawler

SCRAPY_VERSION: tuple[int, int] = (int(version_info[0]), int(version_info[1]))

# Scrapy >= 2.18 lets open_spider raise CloseSpider: the engine then never starts.
CLOSE_SPIDER_AT_OPEN = SCRAPY_VERSION >= (2, 18)

# Scrapy >= 2.13 logs a drop at the level its DropItem asks for; older versions need our formatter.
DROP_LOG_LEVEL_HONOURED = SCRAPY_VERSION >= (2, 13)

try:  # Scrapy versions with ensure_awaitable await what close_spider returns (and deprecate a Deferred)
    from scrapy.utils.defer import ensure_awaitable as _  # noqa: F401

    CLOSE_AWAITS_COROUTINES = True
except ImportError:  # pragma: no cover - Scrapy < 2.14
    CLOSE_AWAITS_COROUTINES = False


def installed_reactor() -> Any:
    """The running Twisted reactor, imported when first needed (importing it installs the
    default reactor, so modules never import it at their top)."""
    from twisted.internet import reactor

    return reactor


async def wait(deferred: Any) -> Any:
    """What ``deferred`` fires with (or raises what it fails with), under the asyncio reactor
    and the others alike."""
    return await maybe_deferred_to_future(deferred)


async def maybe_await(value: Any) -> Any:
    """``value``, or what it gives when it is a Deferred or another awaitable."""
    from twisted.internet.defer import Deferred

    if isinstance(value, Deferred):
        return await wait(value)
    if hasattr(value, "__await__"):
        return await value
    return value


def closing_result(closing: Any) -> Any:
    """What ``close_spider`` returns for a Deferred that ends the closing: a Future where Scrapy
    awaits what it gets (so closing goes on even when nobody awaits it), else the Deferred."""
    return maybe_deferred_to_future(closing) if CLOSE_AWAITS_COROUTINES else closing


def engine_of(crawler: Crawler) -> ExecutionEngine | None:
    """The crawl's engine; None for a pipeline opened by hand, outside a crawl."""
    try:
        return getattr(crawler, "engine", None)
    except RuntimeError:  # Scrapy >= 2.19 before the crawl starts
        return None


def close_spider(engine: ExecutionEngine, reason: str) -> None:
    """Close the engine's spider with ``reason`` (``finish_reason`` in the stats)."""
    if hasattr(engine, "close_spider_async"):  # Scrapy >= 2.14 deprecates close_spider()
        deferred_from_coro(engine.close_spider_async(reason=reason))
    elif engine.spider is not None:  # pragma: no cover - Scrapy < 2.14
        engine.close_spider(engine.spider, reason)


def spider_closing(engine: ExecutionEngine) -> bool:
    """The engine is closing its spider (or stopped running: Scrapy's shutdown)."""
    if not engine.running:
        return True
    slot = getattr(engine, "_slot", None) or getattr(engine, "slot", None)  # Scrapy >= 2.13, older
    return getattr(slot, "closing", None) is not None
