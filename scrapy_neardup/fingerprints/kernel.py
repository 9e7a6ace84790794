"""The optional C kernel: the loops of folding, fingerprinting, sketch overlap and the LevelDB
bucket index, built from ``_kernel.c`` by ``pip install`` where a compiler is present.

``kernel`` is the compiled module, or None: every caller has a numpy path that gives the same
values, so an install without a compiler works, only slower.
"""

from __future__ import annotations

import importlib
from typing import Any

kernel: Any  # the extension module has no type stubs
try:
    kernel = importlib.import_module(f"{__package__}._kernel")
except ImportError:  # pragma: no cover - installs without a compiler run on numpy alone
    kernel = None


def compiled_kernel_available() -> bool:
    """True when the C kernel was built; fingerprints are the same either way, only faster."""
    return kernel is not None
