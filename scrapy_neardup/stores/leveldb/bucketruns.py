"""Sorted runs of bucket entries on disk: the older part of a LevelDB namespace's buckets.

An entry is one uint64, a bucket's key (the low 32 bits of the xxh64 of its bytes, as in
bucketindex.py) in the high half and a document id in the low half, so that sorting the
entries sorts them by bucket and, within a bucket, oldest first. A run file holds them
sorted, in pages of 512, and after them what is kept in memory while the run is in use: the
first entry of each page (to find a bucket's page without reading the file), an xxh64
checksum of each page's bytes (a damaged page is an error, never members read wrong), where
each page starts, and a blocked Bloom filter of its keys (a bucket the run does not hold
costs no read at all). Memory is about 2 bytes an entry, against 10-21 for the table in
memory; pages are read with ``pread``, so the OS's page cache, not the process, holds the file.

A page is packed: its first key and lowest id, then for each entry one field of fixed width,
the key's gap from the entry before it above the id's offset from that lowest id, each part
as wide as the page's largest needs (keys are spread evenly, so at millions of entries their
gaps take a few bits; ids take the log of the run's span): about half the 8 bytes of an entry
as a raw uint64. Its head also keeps the key before every 64th entry, so that a lookup
decodes from there, not from the page's first entry. Runs of earlier versions (raw pages, their own magic) are read and merged as
they are; the next merge writes them packed.

Runs never change once written: a new one is written beside the others and renamed into
place when whole, merging makes a new run from several, and the index's manifest
(tieredindex.py) says which runs are live. The C kernel reads pages and builds filters when
it is built; numpy does the same otherwise (tests compare the two).
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import xxhash

from ...fingerprints.kernel import kernel
from .indexfiles import NOFOLLOW

PAGE = 512  # entries a page
# Filter bits a key. A lookup asks every run for each of its buckets, most of them absent there,
# and each ask the filter lets through reads and checks a page for nothing: 16 bits let about
# 0.15% through (8 let about 1.5%). That costs a page read a run, whatever its size, while a
# filter's bytes grow with its run: a large run, which holds most of the index, takes 8 bits a
# key (half the bytes on disk and in memory for most entries, about a quarter of a page read
# more a lookup), the smaller ones 16. A run keeps the filter it was written with (its size is
# in its footer), so runs of any size are read alike.
BLOOM_BITS = 16
LARGE_RUN_KEYS = 1 << 23  # entries of about 420,000 documents
LARGE_RUN_BLOOM_BITS = 8
BLOOM_PROBES = 6  # bits a key sets, all in one 512-bit block of the filter
_BLOCK_BYTES = 64
_RAW_MAGIC = b"NDRUN\x00\x00\x01"  # pages of raw uint64 entries, 4 KB each (earlier versions)
_MAGIC = b"NDRUN\x00\x00\x02"  # packed pages, where each starts kept after the checksums
# magic, entries, pages, filter blocks, lowest id, highest id, checksum of what follows the pages
_FOOTER = struct.Struct("<8sQQQQQQ")
# A packed page's head: its first key, its lowest id, the bits of a key's gap, of an id's offset;
# then the key before every PAGE_STRIDE-th entry, where a lookup starts decoding.
_PAGE_HEAD = struct.Struct("<IIBB")
PAGE_STRIDE = 64
MAX_PAGE_BYTES = _PAGE_HEAD.size + 4 * ((PAGE - 1) // PAGE_STRIDE) + 8 * PAGE  # fields of 64 bits
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
    bits = BLOOM_BITS if keys < LARGE_RUN_KEYS else LARGE_RUN_BLOOM_BITS
    return max(1, -(-keys * bits // (8 * _BLOCK_BYTES)))


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


def pack_page(entries: np.ndarray) -> bytes:
    """The bytes of a page of sorted ``entries`` (1 to :data:`PAGE`), packed."""
    keys, ids = entries >> np.uint64(32), entries & _LOW
    gaps = np.diff(keys, prepend=keys[:1])
    lowest = ids.min()
    offsets = ids - lowest
    key_bits, id_bits = int(gaps.max()).bit_length(), int(offsets.max()).bit_length()
    head = _PAGE_HEAD.pack(int(keys[0]), int(lowest), key_bits, id_bits)
    before = keys[PAGE_STRIDE - 1 : len(keys) - 1 : PAGE_STRIDE].astype("<u4").tobytes()
    fields = ((gaps << np.uint64(id_bits)) | offsets).astype(_ENTRY).view(np.uint8).reshape(-1, 8)
    bits = np.unpackbits(fields, axis=1, count=key_bits + id_bits, bitorder="little")
    return head + before + np.packbits(bits, bitorder="little").tobytes()


def unpack_page(data: bytes, count: int) -> np.ndarray:
    """The ``count`` entries of a packed page (:func:`pack_page`), or ValueError."""
    if len(data) < _PAGE_HEAD.size:
        raise ValueError("a packed page is shorter than its head")
    key, lowest, key_bits, id_bits = _PAGE_HEAD.unpack_from(data)
    width, fields_at = key_bits + id_bits, _PAGE_HEAD.size + 4 * ((count - 1) // PAGE_STRIDE)
    if key_bits > 32 or id_bits > 32 or len(data) != fields_at + -(-count * width // 8):
        raise ValueError("a packed page does not have the size its head says")
    bits = np.unpackbits(np.frombuffer(data, np.uint8, offset=fields_at), count=count * width, bitorder="little")
    fields = np.zeros((count, 8), dtype=np.uint8)
    fields[:, : -(-width // 8)] = np.packbits(bits.reshape(count, width), axis=1, bitorder="little")
    values = fields.view(_ENTRY).ravel().astype(np.uint64)
    keys = np.uint64(key) + np.cumsum(values >> np.uint64(id_bits), dtype=np.uint64)
    ids = (values & np.uint64((1 << id_bits) - 1)) + np.uint64(lowest)
    return (keys << np.uint64(32)) | ids


class Run:
    """One run file, open: its fences, page checksums, page starts and filter in memory, its
    pages on disk."""

    def __init__(
        self,
        path: str,
        fd: int,
        count: int,
        min_id: int,
        max_id: int,
        fences: np.ndarray,
        sums: np.ndarray,
        starts: np.ndarray,
        bloom: np.ndarray,
        packed: bool = True,
    ):
        self.path = path
        self.name = os.path.basename(path)
        self.fd = fd
        self.count = count
        self.min_id = min_id
        self.max_id = max_id
        self.fences = fences
        self.sums = sums
        self.starts = starts  # page p's bytes are starts[p] to starts[p + 1]
        self.bloom = bloom
        self.packed = packed

    @property
    def pages(self) -> int:
        return len(self.fences)

    def memory_bytes(self) -> int:
        return self.fences.nbytes + self.sums.nbytes + self.starts.nbytes + self.bloom.nbytes

    def disk_bytes(self) -> int:
        return os.fstat(self.fd).st_size

    def spec(self) -> tuple:
        """What the C kernel reads the run with."""
        return (self.fd, self.count, self.fences, self.sums, self.starts, self.bloom, self.packed)

    # ------------------------------------------------------------------ reading

    def read_pages(self, first: int, stop: int) -> np.ndarray:
        """The entries of pages ``first`` to ``stop - 1``, each checked against its checksum."""
        stop = min(stop, self.pages)
        if stop <= first:
            return np.empty(0, dtype=np.uint64)
        start, end = int(self.starts[first]), int(self.starts[stop])
        data = os.pread(self.fd, end - start, start)
        if len(data) != end - start:
            raise RunDamaged(f"bucket run {self.path} is shorter than its footer says")
        pages = []
        for number in range(first, stop):
            page = data[int(self.starts[number]) - start : int(self.starts[number + 1]) - start]
            if xxhash.xxh64_intdigest(page) != int(self.sums[number]):
                raise RunDamaged(f"bucket run {self.path}: page {number} does not match its checksum")
            if not self.packed:
                pages.append(np.frombuffer(page, dtype=_ENTRY).astype(np.uint64))
                continue
            try:
                pages.append(unpack_page(page, min(PAGE, self.count - number * PAGE)))
            except ValueError as exc:
                raise RunDamaged(f"bucket run {self.path}: page {number}: {exc}") from None
        return np.concatenate(pages) if len(pages) > 1 else pages[0]

    def may_hold(self, keys: np.ndarray) -> np.ndarray:
        """For each key, whether the filter lets it through (False: the run does not hold it)."""
        return _in_filter(self.bloom, keys)

    def members(
        self, key: int, limit: int, dead: np.ndarray, floor: int, filed: Callable[[int], bool] | None = None
    ) -> list[int]:
        """The lowest ``limit`` live ids filed under ``key``, a key :meth:`may_hold`, of those
        ``filed`` lets through (numpy; the kernel does the same)."""
        low, high = np.uint64(key << 32), np.uint64((key + 1) << 32)
        page = max(0, int(np.searchsorted(self.fences, low, side="right")) - 1)
        found: list[int] = []
        while page < self.pages and len(found) < limit:
            entries = self.read_pages(page, page + 1)
            held = entries[(entries > low) & (entries < high)] & _LOW
            held = held[(held >= floor) & ~np.isin(held, dead)]
            ids = [i for i in held.tolist() if filed is None or filed(i)]
            found.extend(ids[: limit - len(found)])
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
            if len(footer) != _FOOTER.size or footer[:8] not in (_MAGIC, _RAW_MAGIC):
                raise RunDamaged(f"bucket run {path} is not a whole run file")
            magic, count, pages, blocks, min_id, max_id, checksum = _FOOTER.unpack(footer)
            packed = magic == _MAGIC
            meta_size = (24 * pages + 8 if packed else 16 * pages) + _BLOCK_BYTES * blocks
            at = size - _FOOTER.size - meta_size
            if pages != -(-count // PAGE) or at < 0 or (not packed and at != 8 * PAGE * pages):
                raise RunDamaged(f"bucket run {path} does not have the size its footer says")
            meta = os.pread(fd, meta_size, at)
            if len(meta) != meta_size or xxhash.xxh64_intdigest(meta) != checksum:
                raise RunDamaged(f"bucket run {path} does not match its checksum")
            fences = np.frombuffer(meta, dtype=_ENTRY, count=pages)  # little-endian, as the kernel reads them
            sums = np.frombuffer(meta, dtype=_ENTRY, count=pages, offset=8 * pages)
            if packed:
                starts = np.frombuffer(meta, dtype=_ENTRY, count=pages + 1, offset=16 * pages)
                sizes = np.diff(starts.astype(np.int64))
                if (
                    starts[0] != 0
                    or starts[-1] != at
                    or not np.all((sizes >= _PAGE_HEAD.size) & (sizes <= MAX_PAGE_BYTES))
                ):
                    raise RunDamaged(f"bucket run {path} has pages of sizes no page has")
            else:  # raw pages of 4 KB, the last one padded (its checksum is of its entries)
                starts = np.arange(pages + 1, dtype=_ENTRY) * np.uint64(8 * PAGE)
                starts[-1] = 8 * count
            bloom = np.frombuffer(meta, dtype=np.uint8, offset=meta_size - _BLOCK_BYTES * blocks)  # these share meta
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, count, min_id, max_id, fences, sums, starts, bloom, packed)

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
            count, min_id, max_id, fences, sums, starts = written
            meta = b"".join([fences, sums, starts, bloom.tobytes()])
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
    fences: list[int] = []
    sums: list[int] = []
    starts = [0]
    count, min_id, max_id = 0, 1 << 32, 0
    tail = np.empty(0, dtype=np.uint64)  # entries of a page not yet full

    def write(entries: np.ndarray) -> None:
        pages = [pack_page(entries[at : at + PAGE]) for at in range(0, len(entries), PAGE)]
        for at, page in zip(range(0, len(entries), PAGE), pages):
            fences.append(int(entries[at]))
            sums.append(xxhash.xxh64_intdigest(page))
            starts.append(starts[-1] + len(page))
        _write_all(fd, b"".join(pages))

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
        write(pending[:whole])
        tail = pending[whole:]
    write(tail)
    if not count:
        return None
    return tuple([count, min_id, max_id] + [np.array(a, dtype=_ENTRY).tobytes() for a in (fences, sums, starts)])


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
