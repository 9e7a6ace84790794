"""Another source tree, measured beside the installed package (``--base DIR``).

A tree is imported from its folder, so its compiled parts (the C kernel, the markup scan, the
page walks) are there only if they were built in place. Without them it runs the numpy and
Python paths: slower, and not the engine meant (benchmarks/README.md, "Crawl rate"). The
benchmarks with ``--base`` refuse such a tree instead of measuring it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

COMPILED = (
    "scrapy_neardup.fingerprints._kernel",
    "scrapy_neardup.fingerprints._markup",
    "scrapy_neardup.fingerprints._pagewalk",
)


def missing_compiled(tree: str | Path) -> list[str]:
    """The compiled modules the installed package has and ``tree`` does not."""
    missing = []
    for name in COMPILED:
        try:
            installed = importlib.util.find_spec(name) is not None
        except ImportError:
            installed = False
        folder = Path(tree).joinpath(*name.split(".")[:-1])
        stem = name.rsplit(".", 1)[1]
        built = any(folder.joinpath(stem + suffix).exists() for suffix in importlib.machinery.EXTENSION_SUFFIXES)
        if installed and not built:
            missing.append(name)
    return missing


def check_base(tree: str | Path | None) -> str | None:
    """Why ``tree`` cannot stand for a version of the package here, or None when it can."""
    if tree is None:
        return None
    if not Path(tree, "scrapy_neardup", "__init__.py").exists():
        return f"--base {tree}: not a source tree of scrapy_neardup"
    missing = missing_compiled(tree)
    if missing:
        return (
            f"--base {tree}: its compiled parts are not built ({', '.join(m.rsplit('.', 1)[1] for m in missing)}), "
            "so it would run on numpy and Python alone; build them in place "
            f"(pip install --no-deps -e {tree} in a virtualenv of its own) and run again"
        )
    return None
