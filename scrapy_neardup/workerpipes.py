"""The pipes between a front end and its worker processes (the crawl's page workers, the
service's fingerprint workers): how a worker is started, and how messages cross.

A worker is a new Python process running its module's ``serve()``, with two pipes beside its
standard streams: tasks in on :data:`TASKS_FD`, answers out on :data:`RESULTS_FD`. Each message
is a frame: its length (:data:`LENGTH`), then its bytes, most often a pickle (:func:`framed`).
This module imports neither Twisted nor Scrapy: workers import it first, and it is part of
their start.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from collections.abc import Sequence
from typing import Any, BinaryIO

TASKS_FD = 3  # in a worker: tasks come in on this descriptor
RESULTS_FD = 4  # and answers go out on this one
CHILD_FDS = {1: 1, 2: 2, TASKS_FD: "w", RESULTS_FD: "r"}  # a worker's descriptors, as Twisted spawns them
LENGTH = struct.Struct(">I")  # a frame's length, before its bytes
PIPE_SIZE = 1 << 20  # bytes: Linux's default limit for a process that is not privileged
# A worker's numpy makes no BLAS call; OpenBLAS would still start a thread a core at import,
# CPU taken from the other core (the crawler's) while the worker starts. A user's value is kept.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1"}


def framed(obj: Any) -> bytes:
    """``obj`` pickled, after its length: one message on a worker's pipes."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return LENGTH.pack(len(data)) + data


def read_frame(stream: BinaryIO) -> bytes | None:
    """The bytes of the next frame of a blocking ``stream`` (without its length); None at its
    end, or when it ends inside a frame (the other side stopped)."""
    head = _read_exactly(stream, LENGTH.size)
    return None if head is None else _read_exactly(stream, LENGTH.unpack(head)[0])


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if data is not None and len(data) == size else None


def split_frames(buffer: bytearray) -> list[bytes]:
    """The bytes of each whole frame at the start of ``buffer``, taken out of it; a frame not
    yet whole stays there for the next read to complete."""
    frames = []
    start = 0
    with memoryview(buffer) as view:  # each frame copied once, out of the buffer
        while len(buffer) - start >= LENGTH.size:
            (length,) = LENGTH.unpack_from(buffer, start)
            end = start + LENGTH.size + length
            if len(buffer) < end:
                break
            frames.append(bytes(view[start + LENGTH.size : end]))
            start = end
    del buffer[:start]
    return frames


def spawn_arguments(module: str) -> dict[str, Any]:
    """The keyword arguments of Twisted's ``reactor.spawnProcess`` that start a worker running
    ``module``'s ``serve()``, with the parent's import path (in its order, the current folder
    named) as PYTHONPATH: it imports the package, and the extractor, from where the parent did;
    and :data:`ONE_THREAD` unless the environment says otherwise.

    Not "-m": pickled classes must name their modules, not __main__. "-c" puts the current
    folder first on the path, ahead of PYTHONPATH: a source checkout there would be imported
    instead of the parent's package, so that entry goes."""
    body = f"import sys\nif sys.path[:1] == ['']: del sys.path[0]\nfrom {module} import serve; serve()"
    path = os.pathsep.join(entry or os.getcwd() for entry in sys.path)
    return {
        "executable": sys.executable,
        "args": [sys.executable, "-c", body],
        "env": {**ONE_THREAD, **os.environ, "PYTHONPATH": path},
        "childFDs": CHILD_FDS,
    }


def open_pipes() -> tuple[BinaryIO, BinaryIO]:
    """In a worker: its tasks pipe (buffered reads) and its results pipe."""
    return os.fdopen(TASKS_FD, "rb"), os.fdopen(RESULTS_FD, "wb")


def send(results: BinaryIO, obj: Any) -> None:
    """In a worker: ``obj`` framed on the results pipe, at once (the parent waits for it)."""
    results.write(framed(obj))
    results.flush()


def widen_pipe(fd: int) -> None:
    """Let the pipe ``fd`` hold a few whole pages (Linux; elsewhere, or past the system's
    limit, it keeps its size): a pipe of 64 KB takes a page of 100-300 KB in pieces, a turn of
    the reactor and a wake of the worker each."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (ImportError, AttributeError, OSError):
        pass


def write_now(fd: int, data: bytes) -> int:
    """Bytes of ``data`` written to the non-blocking pipe ``fd`` at once (0 when it is full or
    gone), without waiting for the reactor to write them."""
    try:
        return os.write(fd, data)
    except OSError:
        return 0


def writev_now(fd: int, pieces: Sequence[bytes]) -> int:
    """Bytes of ``pieces`` written, in order, to the non-blocking pipe ``fd`` in one call at
    once (0 when it is full or gone, or where there is no writev): a page and its head go out
    without being joined."""
    try:
        return os.writev(fd, pieces)
    except (OSError, AttributeError):
        return 0


def unsent(pieces: Sequence[bytes], sent: int) -> list[bytes]:
    """What is left of ``pieces`` once their first ``sent`` bytes are written."""
    left = []
    for piece in pieces:
        if sent >= len(piece):
            sent -= len(piece)
            continue
        left.append(piece[sent:] if sent else piece)
        sent = 0
    return left


def read_available(fd: int) -> bytes:
    """Everything a non-blocking pipe holds now, without waiting, leaving its end for the
    reactor to see. Twisted reads a pipe 8 KB a turn: a busy parent would read answers slower
    than a worker writes them, and the tasks waiting for them would pile up in memory."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:  # empty (EAGAIN) or gone: Twisted's next read reports an end
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)
