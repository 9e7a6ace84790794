"""The answers of ``neardup serve`` as JSON: orjson when installed (extra ``fast``), else the standard library.

An answer lists the stored text of every similar entry, so writing it is a good part of a
request's cost; orjson writes the same JSON several times faster. What orjson does not write
(a lone surrogate, an integer past 64 bits) the standard library writes, a lone surrogate as an
escape. Requests are read by the standard library: orjson reads an integer past 64 bits as a
float, another value.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

orjson: ModuleType | None
try:
    import orjson
except ImportError:  # pragma: no cover - the extra "fast" is not installed
    orjson = None


def encode(answer: Any) -> bytes:
    """``answer`` as compact UTF-8 JSON."""
    if orjson is not None:
        try:
            return orjson.dumps(answer)
        except TypeError:  # what orjson does not write (a lone surrogate, a 65-bit integer)
            pass
    try:
        return json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (sent as an escape in a key): written as one
        return json.dumps(answer, separators=(",", ":")).encode("ascii")
