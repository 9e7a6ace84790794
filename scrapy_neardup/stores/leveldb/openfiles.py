"""The process's soft limit of open files, raised before LevelDB first reads it.

LevelDB maps its first 1,000 table files into memory and keeps the others open as long as it
holds fewer than a fifth of the soft limit of open files, which it reads once, when a process
opens its first database; every read of a table beyond that opens and closes the file again,
at more CPU than a read of a table held open (benchmarks/README.md). At the usual soft limit
of 1,024 that is 204 tables: past about 1.5 million documents (a table holds about 1,200), a
store reads more and more of its tables that way. Any process may raise its soft limit up to
its hard limit, so the store does, before its first database is opened.
"""

from __future__ import annotations

import logging

try:
    import resource
except ImportError:  # not on this platform: LevelDB keeps what the platform allows
    resource = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

WANTED = 1 << 17  # a fifth is about 26,000 tables: some 30 million documents


def raise_open_files_limit(wanted: int = WANTED) -> tuple[int, int] | None:
    """Raise the soft limit of open files to ``wanted`` (at most the hard limit); the limits
    before and after when raised, else None (high enough already, or not allowed)."""
    if resource is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft == resource.RLIM_INFINITY or soft >= target:
        return None
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:
        logger.debug("could not raise the soft limit of open files from %d to %d: %s", soft, target, exc)
        return None
    logger.info(
        "raised this process's soft limit of open files from %d to %d, so that LevelDB keeps its "
        "table files open instead of opening one for each read",
        soft,
        target,
    )
    return soft, target
