"""Bottom-k sketches of character shingles, for verifying candidates.

A sketch is the ``k`` smallest 32-bit hashes of a document's character w-shingles (w = 5 by
default, on content characters only), plus the number of distinct shingles. From two
sketches we estimate Jaccard resemblance and containment (Broder 1997); both are needed:
a reprint cut to 75% has Jaccard 0.75 but containment 1.0, while two articles sharing a
site disclaimer or a quoted sentence have low values of both.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, field

import numpy as np

from .kernel import kernel

_P = np.uint64(0x100000001B3)  # FNV-64 prime, as a polynomial base
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: spreads polynomial hashes over all 64 bits."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def shingle_hashes(chars: str, width: int = 5) -> np.ndarray:
    """Distinct 32-bit hashes of every ``width``-character shingle of ``chars`` (sorted)."""
    return shingle_hashes_of_codes(np.frombuffer(chars.encode("utf-32-le"), dtype=np.uint32), width)


def shingle_hashes_of_codes(codes: np.ndarray, width: int = 5) -> np.ndarray:
    """:func:`shingle_hashes` of an array of code points."""
    return _distinct_by_top(np.sort(mixed_shingles(codes, width)))[0]


def mixed_shingles(codes: np.ndarray, width: int = 5) -> np.ndarray:
    """The 64-bit mixed polynomial hash of every ``width``-code-point shingle, in text order
    (the whole text is one shingle when it is shorter than ``width``)."""
    codes = codes.astype(np.uint64)
    if len(codes) < width:
        if len(codes) == 0:
            return np.empty(0, dtype=np.uint64)
        width = len(codes)
    with np.errstate(over="ignore"):
        h = np.zeros(len(codes) - width + 1, dtype=np.uint64)
        for offset in range(width):  # a loop over the shingle width, not over the text
            h = h * _P + codes[offset : offset + len(h)]
        return mix64(h)


def _distinct_by_top(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of sorted 64-bit hashes: the distinct top 32 bits (the sketch's hashes), and for each
    the smallest whole hash that has them."""
    top = (ordered >> np.uint64(32)).astype(np.uint32)
    first = np.concatenate(([True], top[1:] != top[:-1])) if len(top) else np.empty(0, dtype=bool)
    return top[first], ordered[first]


# A sketch key keeps 40 bits of its shingle's hash: the 32 bits a sketch stores are small
# for the smallest hashes (about 2**32 / distinct shingles), so keys of those bits alone
# collide by chance between unrelated documents, in proportion to the documents stored; the
# low bits are as random as any.
SKETCH_KEY_BITS = 40


def sketch_and_keys(codes: np.ndarray, k: int = 128, width: int = 5, keys: int = 4) -> tuple[Sketch, list[int]]:
    """The sketch of ``codes`` and its ``keys`` sketch keys: for each of its smallest hashes,
    the low :data:`SKETCH_KEY_BITS` bits of the smallest whole hash with those top bits."""
    shingles = mixed_shingles(codes, width)
    tops, whole = _distinct_by_top(np.sort(shingles))
    low_bits = whole[:keys] & np.uint64((1 << SKETCH_KEY_BITS) - 1)
    kept = tops[:k].copy()
    return Sketch(kept, len(tops), first_places(shingles, kept, len(codes))), low_bits.tolist()


def first_places(shingles: np.ndarray, kept: np.ndarray, length: int) -> np.ndarray:
    """For each sketch hash of ``kept``, the place (0-255, :func:`.storywords.place_of`) of
    the first shingle of ``shingles`` (text order) with those top bits."""
    tops = (shingles >> np.uint64(32)).astype(np.uint32)
    order = np.argsort(tops, kind="stable")  # equal tops keep text order: the first comes first
    ordered = tops[order]
    first = np.searchsorted(ordered, kept)
    return (order[first].astype(np.int64) * 256 // max(1, length)).astype(np.uint8)


_STORED = np.dtype("<u4")  # a sketch's hashes as stored by records of the first layout

# A record stores a sketch's hashes by Elias-Fano coding (they are sorted and distinct): the
# number of hashes and of low bits, each hash's low bits (about the log of the mean gap between
# hashes) packed one after another, then the high bits in unary, hash i setting bit
# ``(hash >> low bits) + i`` of a bit vector. Within two bits a hash of the least any code of
# sorted values can take, and read back with a few array operations.
_PACKED = struct.Struct("<HB")  # hashes, low bits of each


@functools.lru_cache(maxsize=64)
def _bit_places(count: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ``count`` values of ``width`` bits packed from bit 0 on: the 8 bytes that hold each
    (indexes), the shift that brings it to bit 0, and ``arange(count)``."""
    bits = np.arange(count, dtype=np.int64) * width
    starts = (bits >> 3)[:, None] + np.arange(8)
    return starts, (bits & 7).astype(np.uint64), np.arange(count, dtype=np.int64)


def packed_hashes(hashes: np.ndarray) -> bytes:
    """Sorted 32-bit hashes as a record stores them (see :data:`_PACKED`; ``kernel.pack_hashes``
    writes the same bytes)."""
    count = len(hashes)
    if count == 0:
        return _PACKED.pack(0, 0)
    values = hashes.astype(np.uint64)
    if np.any(values[1:] < values[:-1]):
        raise ValueError("sketch hashes are not sorted")
    low = max(0, ((int(values[-1]) + 1) // count).bit_length() - 1)
    lows = (values[:, None] >> np.arange(low, dtype=np.uint64)) & np.uint64(1)
    highs = (values >> np.uint64(low)).astype(np.int64) + np.arange(count)
    unary = np.zeros(int(highs[-1]) + 1, dtype=np.uint8)
    unary[highs] = 1
    return b"".join(
        [
            _PACKED.pack(count, low),
            np.packbits(lows.astype(np.uint8).ravel(), bitorder="little").tobytes(),
            np.packbits(unary, bitorder="little").tobytes(),
        ]
    )


def unpacked_hashes(data: bytes, offset: int, end: int) -> np.ndarray:
    """The hashes :func:`packed_hashes` wrote from ``offset`` to ``end`` of ``data``
    (``kernel.unpack_hashes`` reads the same, as little-endian bytes)."""
    count, low = _PACKED.unpack_from(data, offset)
    offset += _PACKED.size
    starts, shifts, ranks = _bit_places(count, low)
    lows_end = offset + (count * low + 7) // 8
    # Each value is read as the 8 bytes from its first: those past the low bits are masked off,
    # and those past the data are zeros.
    read = lows_end + 8 - offset
    window = np.frombuffer(data, dtype=np.uint8, count=min(len(data) - offset, read), offset=offset)
    if len(window) < read:
        window = np.concatenate((window, np.zeros(read - len(window), dtype=np.uint8)))
    lows = window[starts].view("<u8").ravel() >> shifts
    unary = np.unpackbits(np.frombuffer(data, dtype=np.uint8, count=end - lows_end, offset=lows_end), bitorder="little")
    hashes = np.nonzero(unary)[0][:count] - ranks  # a new array: the steps below work in place
    hashes <<= low
    hashes |= lows.view(np.int64) & ((1 << low) - 1)
    return hashes.astype(np.uint32)


@dataclass(frozen=True)
class Sketch:
    hashes: np.ndarray  # sorted uint32, at most k of them
    size: int  # distinct shingles in the whole document
    # The place (0-255 over the content) of each hash's first shingle: where a shared passage sits.
    places: np.ndarray | None = field(default=None, compare=False)

    @classmethod
    def of(cls, chars: str, k: int = 128, width: int = 5) -> Sketch:
        return cls.of_codes(np.frombuffer(chars.encode("utf-32-le"), dtype=np.uint32), k, width)

    @classmethod
    def of_codes(cls, codes: np.ndarray, k: int = 128, width: int = 5) -> Sketch:
        return sketch_and_keys(codes, k, width, 0)[0]

    def to_bytes(self) -> bytes:
        return self.hashes.astype("<u4").tobytes()

    def packed(self) -> bytes:
        """The hashes as a record stores them, read back by :meth:`from_record` (``packed``)."""
        if kernel is None:
            return packed_hashes(self.hashes)
        return kernel.pack_hashes(np.ascontiguousarray(self.hashes, dtype=np.uint32))

    @classmethod
    def from_bytes(cls, data: bytes, size: int, places: bytes | None = None) -> Sketch:
        hashes = np.frombuffer(data, dtype=_STORED)
        return cls(
            hashes if _STORED.isnative else hashes.astype(np.uint32),
            size,
            None if places is None else np.frombuffer(places, dtype=np.uint8),
        )

    @classmethod
    def from_record(cls, data: bytes, offset: int, size: int, placed: bool, packed: bool = False) -> Sketch:
        """The sketch that ends a stored record, from ``offset``: its hashes (:meth:`packed`,
        or when not ``packed`` as :meth:`to_bytes` writes them), and when ``placed`` a place
        byte for each after them. The places, and plain hashes, are read in place."""
        if packed:
            count = _PACKED.unpack_from(data, offset)[0]
            end = len(data) - count if placed else len(data)
            if kernel is None:
                hashes = unpacked_hashes(data, offset, end)
            else:
                stored = np.frombuffer(kernel.unpack_hashes(data, offset, end), _STORED)
                hashes = stored if _STORED.isnative else stored.astype(np.uint32)
        else:
            count = (len(data) - offset) // 5 if placed else (len(data) - offset) // 4
            end = offset + 4 * count
            stored = np.frombuffer(data, _STORED, count, offset)
            hashes = stored if _STORED.isnative else stored.astype(np.uint32)
        # Positional arguments: numpy parses keywords at a cost near the read's own.
        places = np.frombuffer(data, np.uint8, -1, end) if placed else None
        return cls(hashes, size, places)


def overlap(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """Of the bottom-k sketch of the union of two sketches (sorted, distinct hashes): how many
    hashes are in both, and how many it holds (k, or fewer distinct hashes)."""
    # The k smallest hashes of the union are the union's true bottom-k, and each of them is
    # in a document's sketch exactly when it is in that document. Both sketches hold
    # distinct hashes, so in their merged, sorted list a hash in both appears twice in a row.
    k = max(len(a), len(b))
    merged = np.sort(np.concatenate((a, b)))
    repeat = merged[1:] == merged[:-1]  # merged[i + 1] is in both sketches
    rank = np.cumsum(~repeat)  # position of merged[i + 1] in the union
    union = min(k, int(rank[-1]) + 1) if len(rank) else len(merged)
    return int(np.count_nonzero(repeat & (rank < union))), union


def resemblance(a: Sketch, b: Sketch) -> tuple[float, float]:
    """Estimated (Jaccard, containment of the smaller in the larger) of two documents.

    Jaccard comes from the bottom-k of the union; containment follows from Jaccard and the
    two shingle counts: |A n B| = J (|A| + |B|) / (1 + J).
    """
    if a.size == 0 or b.size == 0:
        return 0.0, 0.0
    both, union = (kernel.overlap if kernel is not None else overlap)(a.hashes, b.hashes)
    jaccard = both / union
    intersection = jaccard * (a.size + b.size) / (1.0 + jaccard)
    containment = min(1.0, intersection / min(a.size, b.size))
    return jaccard, containment
