"""The pipes between a front end and its worker processes: frames whole however the bytes
arrive, and a worker started from anywhere runs the parent's package."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from scrapy_neardup.fingerprints.fingerprint import Fingerprinter, Recipe
from scrapy_neardup.newsworld.small import STORIES
from scrapy_neardup.workerpipes import (
    LENGTH,
    framed,
    read_available,
    read_frame,
    spawn_arguments,
    split_frames,
)

MESSAGES = [None, "短", ("标题", b"\x00\xff" * 3), "大" * 40_000, list(range(5))]  # the 4th: 120 KB of UTF-8
STREAM = b"".join(framed(message) for message in MESSAGES)
# Pieces a writer sends: a length cut in two, several frames in one piece, the long one in many.
PIECES = (1, 2, 5, 30, 9_000, 70_000, 1, 65_536)


def _writer(pieces: tuple[int, ...]) -> subprocess.Popen:
    """A process writing its standard input to its standard output in pieces of these sizes
    (the rest in one), each flushed after a pause: the reader gets them apart."""
    body = (
        "import sys, time\n"
        "data = sys.stdin.buffer.read()\n"
        f"for size in {list(pieces)} + [len(data)]:\n"
        "    piece, data = data[:size], data[size:]\n"
        "    sys.stdout.buffer.write(piece); sys.stdout.buffer.flush(); time.sleep(0.02)\n"
    )
    return subprocess.Popen([sys.executable, "-c", body], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def _loads(payloads: list[bytes]) -> list:
    return [pickle.loads(payload) for payload in payloads]


def test_split_frames_takes_whole_frames_and_keeps_the_rest():
    assert len(framed(MESSAGES[3])) > 1 << 16
    buffer = bytearray(STREAM)
    assert _loads(split_frames(buffer)) == MESSAGES  # several in one read
    assert buffer == b""
    got = []
    for byte in STREAM:  # every frame split across reads, its length too
        buffer.append(byte)
        got += split_frames(buffer)
    assert _loads(got) == MESSAGES and buffer == b""
    buffer = bytearray(STREAM[:-1])
    assert _loads(split_frames(buffer)) == MESSAGES[:-1]
    assert buffer == STREAM[len(STREAM) - len(framed(MESSAGES[-1])) : -1]  # the last waits for its end


def test_frames_cross_a_pipe_read_as_it_comes():
    """As the reactor reads a worker's answers: what a non-blocking pipe holds, whenever it
    holds something, frames cut anywhere."""
    writer = _writer(PIECES)
    assert writer.stdin is not None and writer.stdout is not None
    writer.stdin.write(STREAM)
    writer.stdin.close()
    fd = writer.stdout.fileno()
    buffer, got, reads = bytearray(), [], 0
    while True:
        os.set_blocking(fd, True)
        first = os.read(fd, 1)  # wait for the next piece
        if not first:
            break
        os.set_blocking(fd, False)
        buffer += first + read_available(fd)
        got += split_frames(buffer)
        reads += 1
    assert writer.wait(timeout=60) == 0
    assert _loads(got) == MESSAGES and buffer == b""
    assert reads > len(MESSAGES)  # the frames did come in pieces


def test_read_frame_reads_one_frame_at_a_time_from_a_blocking_stream():
    writer = _writer(PIECES)
    assert writer.stdin is not None and writer.stdout is not None
    writer.stdin.write(STREAM + LENGTH.pack(10) + b"cut")  # the writer stops inside a frame
    writer.stdin.close()
    got = []
    while (payload := read_frame(writer.stdout)) is not None:
        got.append(payload)
    assert writer.wait(timeout=60) == 0
    assert _loads(got) == MESSAGES
    assert read_frame(writer.stdout) is None  # at the end it stays at the end


def test_read_available_takes_all_the_pipe_holds_and_leaves_its_end():
    reader, writer = os.pipe()
    os.set_blocking(reader, False)
    try:
        written = bytes(range(256)) * 200  # 51,200 bytes: over Twisted's 8 KB a read, under a pipe's 64 KB
        os.write(writer, written)
        assert read_available(reader) == written
        assert read_available(reader) == b""  # empty: returns at once, does not block
        os.close(writer)
        writer = None
        assert read_available(reader) == b""
        assert os.read(reader, 1) == b""  # the end of file is still there for the reactor
    finally:
        os.close(reader)
        if writer is not None:
            os.close(writer)


def test_a_worker_started_in_a_source_checkout_runs_the_parents_package(tmp_path):
    """A worker (here the service's fingerprint worker, its pipes on descriptors 3 and 4) in a
    folder holding another scrapy_neardup imports the parent's, and answers frame for frame."""
    (tmp_path / "scrapy_neardup").mkdir()
    (tmp_path / "scrapy_neardup" / "__init__.py").write_text('raise ImportError("the checkout")\n', encoding="utf-8")
    recipe = Recipe().resolved()
    texts = ["".join(story.paragraphs) for story in STORIES.values()][:3]
    spawn = spawn_arguments("scrapy_neardup.serve.fingerprint_worker")
    redirect = 'exec "$@" 3<&0 4>&1 0</dev/null 1>&2'  # stdin as its tasks, stdout as its results
    worker = subprocess.Popen(
        ["sh", "-c", redirect, "sh", *spawn["args"]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=spawn["env"],
        cwd=tmp_path,
    )
    assert worker.stdin is not None and worker.stdout is not None and worker.stderr is not None
    worker.stdin.write(framed(recipe) + b"".join(framed((text, None)) for text in texts))
    worker.stdin.close()
    answers = []
    while (payload := read_frame(worker.stdout)) is not None:
        answers.append(pickle.loads(payload))
    assert worker.wait(timeout=120) == 0
    assert "the checkout" not in worker.stderr.read().decode()
    local = Fingerprinter(recipe)
    assert answers[0] is None  # ready
    assert [_signals(fp) for fp in answers[1:]] == [_signals(local.fingerprint(text)) for text in texts]


def test_the_shared_module_imports_no_framework():
    """Both kinds of worker import it first: it is part of their start."""
    probe = (
        "import sys; import scrapy_neardup.workerpipes; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'scrapy', 'twisted', 'numpy'}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _signals(fingerprint):
    return (fingerprint.sentence_keys, fingerprint.simhash, fingerprint.sketch.hashes.tolist(), fingerprint.sketch_keys)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="counts threads in Linux's /proc")
def test_a_worker_imports_numpy_without_openblas_threads(monkeypatch):
    """A worker makes no BLAS call: OpenBLAS's threads would only take CPU from the crawler's
    core while the worker starts. A value the user set is kept."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    probe = "import numpy; print(open('/proc/self/status').read().split('Threads:')[1].split()[0])"
    env = spawn_arguments("scrapy_neardup.crawl.worker_process")["env"]
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert spawn_arguments("scrapy_neardup.crawl.worker_process")["env"]["OPENBLAS_NUM_THREADS"] == "2"
