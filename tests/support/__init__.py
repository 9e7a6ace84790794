"""Code the tests share: corpora, local sites, Redis servers, crawls, the serve process.

pytest puts tests/ on sys.path (``pythonpath`` in pyproject.toml), so test modules import
``support.<module>``; a child Python started by a test gets the same path from ``child_env``.
"""

from __future__ import annotations

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent


def child_env(*folders: Path | str, **variables: str) -> dict[str, str]:
    """The environment for a child Python that imports ``support.<module>``: ``folders``, then
    tests/, then the PYTHONPATH it had, on its PYTHONPATH, and ``variables`` set."""
    inherited = [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []
    path = os.pathsep.join([*map(str, folders), str(TESTS), *inherited])
    return {**os.environ, "PYTHONPATH": path, **variables}
