"""The progress bar of ``dedup`` and ``query``, shown on a terminal only."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import BinaryIO


class Progress:
    """A progress bar on a terminal: by bytes, with a total and an ETA, when the input is a
    regular file (its size is known); by records otherwise."""

    def __init__(self, args: argparse.Namespace, source: BinaryIO):
        self.bar = None
        if args.no_progress or not sys.stderr.isatty():
            return
        from tqdm import tqdm

        try:
            status = os.fstat(source.fileno())
            size = status.st_size if stat.S_ISREG(status.st_mode) else None
        except (OSError, ValueError):
            size = None
        self.by_bytes = size is not None
        if self.by_bytes:
            self.bar = tqdm(total=size, unit="B", unit_scale=True, file=sys.stderr, mininterval=0.5)
        else:
            self.bar = tqdm(unit=" records", file=sys.stderr, mininterval=0.5)

    def line(self, data: bytes) -> None:
        if self.bar is not None:
            self.bar.update(len(data) if self.by_bytes else 1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
