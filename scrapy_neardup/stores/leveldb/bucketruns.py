"""Sorted runs of bucket entries on disk: the older part of a LevelDB namespace's buckets.

An entry is one uint64, a bucket's key (the low 32 bits of the xxh64 of its bytes, as in
bucketindex.py) in the high half and a document id in the low half, so that sorting the
entries sorts them by bucket and, within a bucket, oldest first. A run file holds them
sorted, in pages of 512 (4 KB), and after them what is kept in memory while the run is in
use: the first entry of each page (to find a bucket's page without reading the file), an
xxh64 checksum of each page (a damaged page is an error, never members read wrong), and a
blocked Bloom filter of its keys (a bucket the run does not hold costs no read at all).
Memory is about 2 bytes an entry, against 10-21 for the table in memory; pages are read
with ``pread``, so the OS's page cache, not the process, holds the file.

Runs never change once written: a new one is written beside the others and renamed into
place when whole, merging makes a new run from several, and the index's manifest
(tieredindex.py) says which runs are live. The C kernel reads pages and builds filters when
it is built; numpy does the same otherwise (tests compare the two).
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterable, Sequence

import numpy as np
import xxhash

from ...fingerprints.kernel import kernel
from .indexfiles import NOFOLLOW

PAGE = 512  # entries a page: 4 KB
# Filter bits a key. A lookup asks every run for each of its buckets, most of them absent there,
# and each ask the filter lets through reads and checks a page for nothing: 16 bits let about
# 0.15% through (10 let about 1%) for 0.75 bytes more an entry. A run keeps the filter it was
# written with (its size is in its footer), so runs of either size are read alike.
BLOOM_BITS = 16
BLOOM_PROBES = 6  # bits a key sets, all in one 512-bit block of the filter
_BLOCK_BYTES = 64
_MAGIC = b"NDRUN\x00\x00\x01"
# magic, entries, pages, filter blocks, lowest id, highest id, checksum of what follows the pages
_FOOTER = struct.Struct("<8sQQQQQQ")
_ENTRY = np.dtype("<u8")
_LOW = np.uint64(0xFFFFFFFF)
MERGE_CHUNK = 1 << 22  # entries sorted at once while merging: 32 MB


class RunDamaged(OSError):
    """A run file is missing, incomplete or does not match its checksums."""


def bucket_keys(buckets: Iterable[bytes]) -> np.ndarray:
    """The 32-bit key of each bucket, as the index files it."""
    return np.array([xxhash.xxh64_intdigest(bucket) & 0xFFFFFFFF for bucket in buckets], dtype=np.uint64)


def _mix(keys: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser of each key: where a key's bits go in its filter block."""
    z = keys + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def filter_blocks(keys: int) -> int:
    return max(1, -(-keys * BLOOM_BITS // (8 * _BLOCK_BYTES)))


def _filter_bits(keys: np.ndarray, blocks: int) -> np.ndarray:
    """The bit numbers ``keys`` set in a filter of ``blocks`` blocks: the block follows the
    key's order (so the keys of a stretch of a sorted run set bits of a stretch of blocks),
    the bits in it come from the key's mix."""
    block = (keys * np.uint64(blocks)) >> np.uint64(32)
    mixed = _mix(keys)
    return np.stack(
        [
            block * np.uint64(8 * _BLOCK_BYTES) + ((mixed >> np.uint64(9 * i)) & np.uint64(511))
            for i in range(BLOOM_PROBES)
        ]
    )


def add_to_filter(bloom: np.ndarray, entries: np.ndarray, compiled: bool = True) -> None:
    """Set the filter bits of the keys of sorted ``entries``."""
    if not len(entries):
        return
    blocks = len(bloom) // _BLOCK_BYTES
    if compiled and kernel is not None:
        kernel.bloom_add(bloom, entries, blocks)
        return
    bits = _filter_bits(np.unique(entries >> np.uint64(32)), blocks).ravel()
    low, high = int(bits.min()) // 8, int(bits.max()) // 8 + 1
    flags = np.zeros(8 * (high - low), dtype=bool)
    flags[(bits - np.uint64(8 * low)).astype(np.int64)] = True
    bloom[low:high] |= np.packbits(flags, bitorder="little")


def _in_filter(bloom: np.ndarray, keys: np.ndarray) -> np.ndarray:
    bits = _filter_bits(keys, len(bloom) // _BLOCK_BYTES)
    held = (bloom[(bits >> np.uint64(3)).astype(np.int64)] >> (bits & np.uint64(7)).astype(np.uint8)) & 1
    return held.all(axis=0)


def page_sums(entries: np.ndarray) -> np.ndarray:
    """The xxh64 of each page's bytes."""
    data = entries.astype(_ENTRY, copy=False).tobytes()
    step = 8 * PAGE
    return np.array([xxhash.xxh64_intdigest(data[at : at + step]) for at in range(0, len(data), step)], dtype=np.uint64)


class Run:
    """One run file, open: its fences, page checksums and filter in memory, its pages on disk."""

    def __init__(
        self,
        path: str,
        fd: int,
        count: int,
        min_id: int,
        max_id: int,
        fences: np.ndarray,
        sums: np.ndarray,
        bloom: np.ndarray,
    ):
        self.path = path
        self.name = os.path.basename(path)
        self.fd = fd
        self.count = count
        self.min_id = min_id
        self.max_id = max_id
        self.fences = fences
        self.sums = sums
        self.bloom = bloom

    @property
    def pages(self) -> int:
        return len(self.fences)

    def memory_bytes(self) -> int:
        return self.fences.nbytes + self.sums.nbytes + self.bloom.nbytes

    def disk_bytes(self) -> int:
        return 8 * PAGE * self.pages + self.memory_bytes() + _FOOTER.size

    def spec(self) -> tuple:
        """What the C kernel reads the run with."""
        return (self.fd, self.count, self.fences, self.sums, self.bloom)

    # ------------------------------------------------------------------ reading

    def read_pages(self, first: int, stop: int) -> np.ndarray:
        """The entries of pages ``first`` to ``stop - 1``, each checked against its checksum."""
        start, end = first * PAGE, min(stop * PAGE, self.count)
        if end <= start:
            return np.empty(0, dtype=np.uint64)
        data = os.pread(self.fd, 8 * (end - start), 8 * start)
        if len(data) != 8 * (end - start):
            raise RunDamaged(f"bucket run {self.path} is shorter than its footer says")
        step = 8 * PAGE
        for number, at in enumerate(range(0, len(data), step), first):
            if xxhash.xxh64_intdigest(data[at : at + step]) != int(self.sums[number]):
                raise RunDamaged(f"bucket run {self.path}: page {number} does not match its checksum")
        return np.frombuffer(data, dtype=_ENTRY).astype(np.uint64)

    def may_hold(self, keys: np.ndarray) -> np.ndarray:
        """For each key, whether the filter lets it through (False: the run does not hold it)."""
        return _in_filter(self.bloom, keys)

    def members(self, key: int, limit: int, dead: np.ndarray, floor: int) -> list[int]:
        """The lowest ``limit`` live ids filed under ``key``, a key :meth:`may_hold` (numpy;
        the kernel does the same)."""
        low, high = np.uint64(key << 32), np.uint64((key + 1) << 32)
        page = max(0, int(np.searchsorted(self.fences, low, side="right")) - 1)
        found: list[int] = []
        while page < self.pages and len(found) < limit:
            entries = self.read_pages(page, page + 1)
            held = entries[(entries > low) & (entries < high)] & _LOW
            held = held[(held >= floor) & ~np.isin(held, dead)]
            found.extend(int(i) for i in held[: limit - len(found)])
            if entries[-1] >= high or page + 1 >= self.pages or self.fences[page + 1] >= high:
                break
            page += 1
        return found

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    # ------------------------------------------------------------------ writing

    @classmethod
    def open(cls, path: str) -> Run:
        """A run written whole, or :class:`RunDamaged`."""
        try:
            fd = os.open(path, os.O_RDONLY | NOFOLLOW)
        except OSError as exc:
            raise RunDamaged(f"bucket run {path} cannot be opened ({exc})") from exc
        try:
            size = os.fstat(fd).st_size
            footer = os.pread(fd, _FOOTER.size, max(0, size - _FOOTER.size))
            if len(footer) != _FOOTER.size or footer[:8] != _MAGIC:
                raise RunDamaged(f"bucket run {path} is not a whole run file")
            _, count, pages, blocks, min_id, max_id, checksum = _FOOTER.unpack(footer)
            at = 8 * PAGE * pages
            meta_size = 16 * pages + _BLOCK_BYTES * blocks
            if pages != -(-count // PAGE) or at + meta_size + _FOOTER.size != size:
                raise RunDamaged(f"bucket run {path} does not have the size its footer says")
            meta = os.pread(fd, meta_size, at)
            if len(meta) != meta_size or xxhash.xxh64_intdigest(meta) != checksum:
                raise RunDamaged(f"bucket run {path} does not match its checksum")
            fences = np.frombuffer(meta, dtype=_ENTRY, count=pages)  # little-endian, as the kernel reads them
            sums = np.frombuffer(meta, dtype=_ENTRY, count=pages, offset=8 * pages)
            bloom = np.frombuffer(meta, dtype=np.uint8, offset=16 * pages)  # the three share meta
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, count, min_id, max_id, fences, sums, bloom)

    @classmethod
    def write(
        cls,
        path: str,
        sources: Sequence[np.ndarray | Run],
        dead: np.ndarray,
        floor: int,
        cap: int,
        stop: bytearray | None = None,
        compiled: bool = True,
    ) -> Run | None:
        """Write the entries of ``sources`` (each sorted: an array, or a run) merged as one run
        at ``path``, without dead ids, ids below ``floor`` and a bucket's members past its
        ``cap`` oldest; through a partial file renamed into place once whole and on disk.
        None when it would hold no entry, or when ``stop[0]`` was set first (the kernel
        writes without the GIL and looks at it after each 256 KB)."""
        stop = stop if stop is not None else bytearray(1)
        keys = sum(source.count if isinstance(source, Run) else len(source) for source in sources)
        bloom = np.zeros(_BLOCK_BYTES * filter_blocks(keys), dtype=np.uint8)
        dead = np.ascontiguousarray(dead, dtype=np.uint32)
        partial = path + ".partial"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)  # a stale one, or a link left there (unlink removes the link)
        fd = os.open(partial, os.O_RDWR | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644)
        try:
            if compiled and kernel is not None:
                specs = [s.spec() if isinstance(s, Run) else np.ascontiguousarray(s, dtype=_ENTRY) for s in sources]
                written = kernel.run_write(fd, specs, dead, floor, cap, bloom, len(bloom) // _BLOCK_BYTES, stop)
            else:
                written = _write_pages(fd, merged(sources, dead, floor, cap), bloom, stop)
            if written is None or not written[0]:
                raise _NothingWritten
            count, min_id, max_id, fences, sums = written
            meta = b"".join([fences, sums, bloom.tobytes()])
            _write_all(fd, meta)
            _write_all(
                fd,
                _FOOTER.pack(
                    _MAGIC,
                    count,
                    len(fences) // 8,
                    len(bloom) // _BLOCK_BYTES,
                    min_id,
                    max_id,
                    xxhash.xxh64_intdigest(meta),
                ),
            )
            os.fsync(fd)
            os.replace(partial, path)
        except BaseException as exc:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(partial)
            if isinstance(exc, _NothingWritten):
                return None
            raise
        os.close(fd)
        return cls.open(path)


class _NothingWritten(Exception):
    pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_pages(fd: int, chunks: Iterable[np.ndarray], bloom: np.ndarray, stop: bytearray):
    """numpy's :func:`run_write <scrapy_neardup._kernel>`: the same pages and figures."""
    fences, sums = [], []
    count, min_id, max_id = 0, 1 << 32, 0
    tail = np.empty(0, dtype=np.uint64)  # entries of a page not yet full
    for chunk in chunks:
        if stop[0]:
            return None
        if not len(chunk):
            continue
        add_to_filter(bloom, chunk, compiled=False)
        ids = chunk & _LOW
        min_id, max_id = min(min_id, int(ids.min())), max(max_id, int(ids.max()))
        count += len(chunk)
        pending = np.concatenate((tail, chunk)) if len(tail) else chunk
        whole = len(pending) - len(pending) % PAGE
        if whole:
            done = pending[:whole]
            fences.append(done[::PAGE])
            sums.append(page_sums(done))
            _write_all(fd, done.astype(_ENTRY, copy=False).tobytes())
        tail = pending[whole:]
    if len(tail):
        fences.append(tail[:1])
        sums.append(page_sums(tail))
        _write_all(fd, tail.astype(_ENTRY, copy=False).tobytes() + bytes(8 * (PAGE - len(tail))))
    if not count:
        return None
    return (
        count,
        min_id,
        max_id,
        np.concatenate(fences).astype(_ENTRY).tobytes(),
        np.concatenate(sums).astype(_ENTRY).tobytes(),
    )


class _Reader:
    """A run (or sorted entries in memory) read in order, one stretch of keys at a time."""

    def __init__(self, source: Run | np.ndarray):
        self.run = source if isinstance(source, Run) else None
        self.page = 0
        self.held = np.empty(0, dtype=np.uint64) if self.run is not None else np.asarray(source, dtype=np.uint64)

    def below(self, bound: int) -> np.ndarray:
        """The next entries less than ``bound`` (all that are left when it is 2**64)."""
        run = self.run
        if run is None:
            cut = len(self.held) if bound >= 1 << 64 else int(np.searchsorted(self.held, np.uint64(bound), side="left"))
            taken, self.held = self.held[:cut], self.held[cut:]
            return taken
        last = run.pages if bound >= 1 << 64 else int(np.searchsorted(run.fences, np.uint64(bound), side="left"))
        if last > self.page:
            more = run.read_pages(self.page, last)
            self.held = np.concatenate((self.held, more)) if len(self.held) else more
            self.page = last
        cut = len(self.held) if bound >= 1 << 64 else int(np.searchsorted(self.held, np.uint64(bound), side="left"))
        taken, self.held = self.held[:cut], self.held[cut:]
        return taken


def merged(sources: Sequence[Run | np.ndarray], dead: np.ndarray, floor: int, cap: int) -> Iterable[np.ndarray]:
    """The entries of ``sources`` in order, in chunks of about :data:`MERGE_CHUNK`, without
    the entries of dead ids or of ids below ``floor``, each bucket's ``cap`` oldest kept."""
    total = sum(s.count if isinstance(s, Run) else len(s) for s in sources)
    parts = max(1, -(-total // MERGE_CHUNK))
    readers = [_Reader(source) for source in sources]
    for part in range(1, parts + 1):
        bound = 1 << 64 if part == parts else (part << 32) // parts << 32
        pieces = [piece for piece in (reader.below(bound) for reader in readers) if len(piece)]
        if not pieces:
            continue
        chunk = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        if len(pieces) > 1:
            chunk.sort(kind="stable")  # sorted pieces: a merge of runs
        ids = chunk & _LOW
        keep = ids >= np.uint64(floor)
        if len(dead):
            keep &= ~np.isin(ids, dead)
        chunk = chunk[keep]
        yield capped(chunk, cap)


def capped(chunk: np.ndarray, cap: int) -> np.ndarray:
    """``chunk`` (sorted, whole buckets) with at most ``cap`` entries a bucket, the oldest."""
    if len(chunk) <= cap:
        return chunk
    keys = chunk >> np.uint64(32)
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    if np.diff(np.append(starts, len(chunk))).max() <= cap:
        return chunk
    rank = np.arange(len(chunk)) - np.repeat(starts, np.diff(np.append(starts, len(chunk))))
    return chunk[rank < cap]
