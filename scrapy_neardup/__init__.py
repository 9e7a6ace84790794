"""scrapy-neardup: stop reprinted news before it reaches storage."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

from .engine.detector import Detector
from .engine.verdicts import DUPLICATE, REVISIT, SHORT, UNIQUE, Thresholds, Verdict
from .fingerprints.fingerprint import Fingerprinter, Recipe
from .stores import StoreError, StoreFormatError, StoreUnavailable, open_store

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


def __getattr__(name: str) -> Any:
    # The Scrapy side is imported on first use, so the CLI and the engine start fast.
    if name in ("NearDupPipeline", "NearDuplicateItem", "RevisitedItem"):
        from .crawl import pipeline

        return getattr(pipeline, name)
    if name == "Addon":
        from .crawl.addon import Addon

        return Addon
    if name in ("extract_text", "ExtractionError"):
        from .fingerprints import extract

        return getattr(extract, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
