"""The index folder's own files, written whole or not at all.

A file is written under a new name beside the old one and renamed over it when whole: a crash
leaves the old file, and a failed write leaves nothing. The new file is created, never opened
through a link someone left at its name (``NOFOLLOW``), so it is written in the folder.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import Any

# Open flags that refuse a link at the name (where the system has the flag) and keep bytes as they are.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def replace_whole(path: str, parts: Iterable[Any], sync: bool) -> None:
    """Write ``parts`` (bytes-like) to ``path`` through ``path.partial``; with ``sync`` the data
    is on disk before the rename, for a file whose loss would cost more than rebuilding it."""
    partial = path + ".partial"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(partial)  # a stale one (or a link: unlink removes the link itself)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            for part in parts:
                handle.write(part)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
