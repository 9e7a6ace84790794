"""scrapy-neardup: stop reprinted news before it reaches storage."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Each public name and the module that defines it, imported on first use (PEP 562): the
# package is imported by every ``neardup`` command and crawl process, and the engine's modules
# bring numpy and the text tables, Scrapy's the whole of Scrapy.
_PUBLIC = {
    "DUPLICATE": ".engine.verdicts",
    "REVISIT": ".engine.verdicts",
    "SHORT": ".engine.verdicts",
    "UNIQUE": ".engine.verdicts",
    "Thresholds": ".engine.verdicts",
    "Verdict": ".engine.verdicts",
    "Detector": ".engine.detector",
    "Fingerprinter": ".fingerprints.fingerprint",
    "Recipe": ".fingerprints.recipe",
    "StoreError": ".stores",
    "StoreFormatError": ".stores",
    "StoreUnavailable": ".stores",
    "open_store": ".stores",
    "extract_text": ".fingerprints.extract",
    "ExtractionError": ".fingerprints.extract",
    "NearDupPipeline": ".crawl.pipeline",
    "NearDuplicateItem": ".crawl.pipeline",
    "RevisitedItem": ".crawl.pipeline",
    "Addon": ".crawl.addon",
}

__all__ = [
    "DUPLICATE",
    "REVISIT",
    "SHORT",
    "UNIQUE",
    "Detector",
    "ExtractionError",
    "Fingerprinter",
    "NearDupPipeline",
    "NearDuplicateItem",
    "Recipe",
    "RevisitedItem",
    "StoreError",
    "StoreFormatError",
    "StoreUnavailable",
    "Thresholds",
    "Verdict",
    "__version__",
    "extract_text",
    "open_store",
]

if TYPE_CHECKING:
    from .crawl.addon import Addon as Addon  # not in __all__: Scrapy finds it by its path
    from .crawl.pipeline import NearDuplicateItem, NearDupPipeline, RevisitedItem
    from .engine.detector import Detector
    from .engine.verdicts import DUPLICATE, REVISIT, SHORT, UNIQUE, Thresholds, Verdict
    from .fingerprints.extract import ExtractionError, extract_text
    from .fingerprints.fingerprint import Fingerprinter
    from .fingerprints.recipe import Recipe
    from .stores import StoreError, StoreFormatError, StoreUnavailable, open_store


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # found directly next time
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
