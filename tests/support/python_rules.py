"""Run extraction with readability's rules in Python, as where the C walks are not built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scrapy_neardup.fingerprints import readable


def in_python(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` with the C walks (``_pagewalk``) switched off."""
    walker, readable._walker = readable._walker, None
    try:
        return function(*args)
    finally:
        readable._walker = walker
