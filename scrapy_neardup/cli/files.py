"""The input and output files of the commands that read or write JSON lines.

Lines are bytes in and out, so a line passed through comes back exactly as it came; the output
is put in place only at the end, so an interrupted run leaves the old file untouched.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import stat
import sys
import tempfile
from typing import BinaryIO

from ..review.files import check_distinct, check_page
from ..stores import store_folder
from .common import CommandError

REPORT = "the review page (--report)"


def check_run_files(args: argparse.Namespace) -> None:
    """Before anything is read or written: the input, the output, the review page and the
    store's folder are each their own, and the page can be written where it is named."""
    report = getattr(args, "report", None)
    try:
        check_distinct(
            [("the input", args.input), ("the output (-o)", args.output), (REPORT, report)],
            [("the store's folder (--store)", store_folder(args.store))],
        )
        if report:
            check_page(report, REPORT)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def open_input(path: str) -> BinaryIO:
    """Lines are read as bytes and split at newlines only, so every line can be written back
    exactly as it came, whatever its encoding or stray carriage returns."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CommandError(f"cannot read input {path}: {exc.strerror or exc}") from None


def _same_file(input_path: str, output_path: str) -> bool:
    """Both name one regular file (a terminal or pipe may well be stdin and stdout at once)."""
    try:
        out = os.fstat(sys.stdout.fileno()) if output_path == "-" else os.stat(output_path)
        inp = os.fstat(sys.stdin.fileno()) if input_path == "-" else os.stat(input_path)
    except (OSError, ValueError, io.UnsupportedOperation):  # no such file, or a captured stream
        return False
    return stat.S_ISREG(inp.st_mode) and (inp.st_dev, inp.st_ino) == (out.st_dev, out.st_ino)


# The extended attribute that names a file as an output neardup wrote (Linux; elsewhere no file
# bears it, and an existing output is replaced only with --overwrite).
_WRITTEN_BY = "user.scrapy-neardup"


def _mark_written(fd: int) -> None:
    with contextlib.suppress(AttributeError, OSError):  # no xattrs on this system or file system
        os.setxattr(fd, _WRITTEN_BY, b"output")


def _written_by_neardup(path: str) -> bool:
    try:
        return os.getxattr(path, _WRITTEN_BY) == b"output"
    except (AttributeError, OSError):
        return False


def _check_replaceable(path: str, overwrite: bool) -> None:
    """A file neardup did not write is never replaced unless the user says so (``--overwrite``):
    an output named by mistake would lose a file of theirs. An empty file (made by ``mktemp``)
    and neardup's own earlier output are replaced."""
    if path == "-" or overwrite:
        return
    target = os.path.realpath(path)
    try:
        found = os.stat(target)
    except OSError:
        return
    if stat.S_ISREG(found.st_mode) and found.st_size and not _written_by_neardup(target):
        raise CommandError(
            f"output {path} exists and neardup did not write it: name another file, or add --overwrite to replace it"
        )


class Output:
    """The output file, written under a temporary name in its folder and renamed at the end.

    Writing the input's own file (``-o`` equal to the input, also through a link or stdin) is
    refused: opening it for writing would erase the records still to be read. An interrupted
    run leaves the file that was there before untouched. A file neardup did not write is
    replaced only with ``overwrite`` (see ``_check_replaceable``).
    """

    def __init__(self, path: str, input_path: str, overwrite: bool = False):
        self.path = path
        self.temp: str | None = None
        if _same_file(input_path, path):
            shown = "stdout" if path == "-" else path
            raise CommandError(f"output {shown} is the input file; write the output to another file")
        if path == "-":
            self.stream: BinaryIO = sys.stdout.buffer
            return
        target = os.path.realpath(path)
        if os.path.isdir(target):
            raise CommandError(f"cannot write output {path}: it is a directory")
        if os.path.exists(target) and not os.path.isfile(target):
            # A device or pipe (/dev/null) is written as it is: a rename would replace it.
            try:
                self.stream = open(target, "wb")  # noqa: SIM115 - closed by the Output's owner
            except OSError as exc:
                raise CommandError(f"cannot write output {path}: {exc.strerror or exc}") from None
            return
        _check_replaceable(path, overwrite)
        folder, name = os.path.split(target)
        try:
            handle, self.temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".partial")
        except OSError as exc:
            raise CommandError(f"cannot write output {path}: {exc.strerror or exc}") from None
        try:
            mode = os.stat(target).st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(self.temp, mode)
        _mark_written(handle)
        self.target = target
        self.stream = os.fdopen(handle, "wb")

    def finish(self) -> None:
        """Put the output in place (what was written so far, when a store failed mid-run)."""
        if self.temp is None:
            self.stream.flush()
            if self.stream is not sys.stdout.buffer:
                self.stream.close()
            return
        self.stream.close()
        os.replace(self.temp, self.target)
        self.temp = None

    def keep(self) -> str:
        """Close the partial output and leave it under its temporary name (returned), the old
        output untouched."""
        assert self.temp is not None
        kept, self.temp = self.temp, None
        self.stream.close()
        return kept

    def discard(self) -> None:
        if self.temp is not None:
            self.stream.close()
            with contextlib.suppress(OSError):
                os.unlink(self.temp)
            self.temp = None
