"""A folder nothing can be written in, for the tests of files a run cannot write."""

from __future__ import annotations

import os
import subprocess

import pytest


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder nothing can be written in: mode 0o555, or for root (whom permissions do not
    stop) a read-only tmpfs, which needs the right to mount: skipped without it, unless CI is
    set (CI runs as root and must not skip)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True, text=True
        )
        problem = mounted.stderr.strip() if mounted.returncode else ""
    except FileNotFoundError:
        problem = "no mount command"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"cannot mount a read-only tmpfs: {problem}")
        pytest.skip(f"cannot mount a read-only tmpfs: {problem}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)
