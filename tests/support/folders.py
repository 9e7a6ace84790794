"""Folders a run cannot write in: read-only, or full after a few hundred KB."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def mounted_tmpfs(folder: Path, options: str, what: str) -> Iterator[Path]:
    """A tmpfs mounted with ``options`` on ``folder``, unmounted afterwards. Mounting needs the
    right to mount: skipped without it (a container without the capability), unless CI is set,
    since CI runs as root and must not skip."""
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, text=True
        )
        problem = mounted.stderr.strip() if mounted.returncode else ""
    except FileNotFoundError:
        problem = "no mount command"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"cannot mount {what}: {problem}")
        pytest.skip(f"cannot mount {what}: {problem}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder nothing can be written in: mode 0o555, or for root (whom permissions do not
    stop) a read-only tmpfs."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    with mounted_tmpfs(folder, "ro,size=64k", "a read-only tmpfs"):
        yield folder
