"""Objects named by a dotted path (``package.module.name``), as settings and options name an
extractor, a store class or a policy.

importlib rather than Scrapy's ``load_object``: the command line and the worker processes run
without importing Scrapy.
"""

from __future__ import annotations

import importlib
from typing import Any


def load_dotted(path: str) -> Any:
    """The object ``path`` names; ImportError, AttributeError or ValueError when there is none."""
    module, _, name = path.strip().rpartition(".")
    if not module or not name:
        raise ValueError(f"{path!r} is not a dotted path (package.module.name)")
    return getattr(importlib.import_module(module), name)
