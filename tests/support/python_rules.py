"""Run extraction with readability's rules in Python, as where the C walks are not built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scrapy_neardup.fingerprints import pagewalk


def in_python(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` with the C walks (``_pagewalk``) switched off."""
    walker, pagewalk.walker = pagewalk.walker, None
    try:
        return function(*args)
    finally:
        pagewalk.walker = walker
