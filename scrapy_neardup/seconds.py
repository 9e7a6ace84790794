"""Durations in seconds, as every option and setting that takes one reads them.

One rule for all of them (``--ttl``, ``--older-than``, ``NEARDUP_TTL``,
``NEARDUP_EXTRACT_TIMEOUT``, ...): a finite number above 0, or 0 where 0 has a meaning of its
own (no time window, no bound). ``nan`` passes every comparison and ``inf`` or a negative
number turns a cut-off into "everything": either would make ``purge`` remove every document.
"""

from __future__ import annotations

import math
from typing import Any


def seconds(value: Any, zero: str | None = None) -> float:
    """``value`` as seconds; ValueError saying what is wanted. ``zero`` is what 0 means for
    this option (None: 0 is refused)."""
    wanted = f"a number of seconds >= 0 and finite (0: {zero})" if zero else "a number of seconds > 0 and finite"
    wanted += f", got {value!r}"
    if isinstance(value, bool):
        raise ValueError(f"must be {wanted}")
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"must be {wanted}") from None
    if not math.isfinite(number) or number < 0 or (number == 0 and zero is None):
        raise ValueError(f"must be {wanted}")
    return number
