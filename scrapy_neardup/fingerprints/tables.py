"""Tables prepared once from their sources and cached as files under the user's cache directory.

Building the word-weight table from jieba's IDF file and the per-code-point text tables
takes far longer than the rest of a start-up, and gives the same arrays every time. Each
table is cached in one ``.npz`` file whose name holds a digest of everything it was built
from (its source files' size, time and content hash, the library and Unicode versions, and
the building code itself), so a changed source gives a new file and the table is built
again; the same sources always give the same arrays, cold or warm.

The directory is ``$NEARDUP_CACHE_DIR`` when set (empty: no cache file at all), else
``$XDG_CACHE_HOME/scrapy-neardup`` or the platform's user cache directory. A cache that
cannot be written or read is no error: the table is built in memory.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import xxhash

CACHE_FORMAT = 1  # bump when the cache file layout changes
_ENV = "NEARDUP_CACHE_DIR"
KEPT_VERSIONS = 4  # files of one table kept, most recently used first

Arrays = dict[str, np.ndarray]


def cache_dir() -> Path | None:
    """Where prepared tables are cached, or None when caching is turned off."""
    configured = os.environ.get(_ENV)
    if configured is not None:
        return Path(configured).expanduser() if configured else None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scrapy-neardup"


def file_signature(path: str | os.PathLike) -> dict:
    """Size, modification time and content hash of a source file."""
    stat = os.stat(path)
    with open(path, "rb") as handle:
        digest = xxhash.xxh64_hexdigest(handle.read())
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "xxh64": digest}


def code_signature(*modules_files: str) -> list:
    """Size and modification time of the modules that build a table: editing the building
    code invalidates its cache even when no version number moved."""
    signature = []
    for name in modules_files:
        stat = os.stat(name)
        signature.append([os.path.basename(name), stat.st_size, stat.st_mtime_ns])
    return signature


def cached_arrays(name: str, key: dict, build: Callable[[], Arrays], directory: Path | None = None) -> Arrays:
    """The arrays ``build`` returns for ``key``: read from the cache, or built and cached.

    ``key`` holds everything the arrays depend on (JSON values); ``directory`` defaults to
    :func:`cache_dir`. When a new file is written, only the :data:`KEPT_VERSIONS` most recently
    used files of the same ``name`` stay: environments or checkouts at other versions sharing
    the cache keep their tables instead of rebuilding each other's, and the cache stays small.
    """
    directory = cache_dir() if directory is None else directory
    if directory is None:
        return build()
    digest = xxhash.xxh64_hexdigest(json.dumps([CACHE_FORMAT, key], sort_keys=True).encode())
    path = directory / f"{name}-{digest}.npz"
    try:
        with np.load(path, allow_pickle=False) as stored:
            arrays = {field: stored[field] for field in stored.files}
        _touch(path)
        return arrays
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        pass  # missing, unreadable or cut short: build it again
    arrays = build()
    _write(directory, name, path, arrays)
    return arrays


def _write(directory: Path, name: str, path: Path, arrays: Arrays) -> None:
    """Write atomically (another process may be reading or writing the same file)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{name}-", suffix=".npz", dir=directory)
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds as bool
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
        _remove_least_used(directory, name)
    except OSError:
        pass  # a read-only or full disk: the table stays in memory for this process


def _touch(path: Path) -> None:
    """Mark a file as just used (its modification time), for :func:`_remove_least_used`."""
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only cache: its files are never removed either


def _remove_least_used(directory: Path, name: str) -> None:
    def last_used(path: Path) -> int:
        try:
            return path.stat().st_mtime_ns
        except OSError:  # removed meanwhile by another process
            return 0

    files = sorted(directory.glob(f"{name}-*.npz"), key=last_used, reverse=True)
    for stale in files[KEPT_VERSIONS:]:
        stale.unlink(missing_ok=True)


def package_version(package_dir: str, distribution: str) -> str:
    """The installed version of ``distribution`` from its metadata directory beside
    ``package_dir``, without importing the package (importing jieba costs a fifth of a
    second); "unknown" when there is none."""
    if not package_dir:
        return "unknown"
    prefix = f"{distribution.lower()}-"
    try:
        names = os.listdir(Path(package_dir).parent)
    except OSError:
        return "unknown"
    for entry in sorted(names):
        if entry.lower().startswith(prefix) and entry.endswith((".dist-info", ".egg-info")):
            return entry[len(prefix) :].rsplit(".", 1)[0].split("-")[0]
    return "unknown"
