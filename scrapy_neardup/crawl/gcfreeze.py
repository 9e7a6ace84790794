"""Python's full garbage collections skip what the process held when the pipeline opened.

A full collection visits every tracked object, and a crawl's process holds tens of thousands
from its start to its end (its modules and numpy's, Scrapy's engine, the pipeline's store and
engine): each full collection of the crawl visited them all again, in the reactor thread. Frozen
(:func:`gc.freeze`) once the pipeline is open, they are skipped until the spider closes, when
they are unfrozen and a cycle among them that became garbage meanwhile is collected. One freeze
for the process, however many crawls share it: the last one to close unfreezes.
"""

from __future__ import annotations

import gc

_holders = 0


def freeze() -> None:
    """Freeze what the process holds now, until the matching :func:`unfreeze`."""
    global _holders
    _holders += 1
    gc.freeze()


def unfreeze() -> None:
    """Undo one :func:`freeze`; the last one gives the objects back to the collector."""
    global _holders
    if _holders:
        _holders -= 1
        if not _holders:
            gc.unfreeze()
