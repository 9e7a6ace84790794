"""An in-memory Bloom filter of the buckets a LevelDB namespace holds.

Most bucket lookups of a check ask for a bucket that does not exist (a new story), and
LevelDB answers those only after probing each level of its tree, which costs more as the
store grows; one probe of this filter answers most of them for a fraction of that. Every
bucket filed is added and none is ever taken out, so the filter never calls a held bucket
absent (which would lose a candidate): a bucket since emptied costs at worst one read.

A Bloom filter cannot grow, and rebuilding it from the store costs a scan of every bucket
(about a minute at a million documents); so when the newest layer is full a new one as large
as all the others together takes the new buckets, and a bucket is absent when no layer holds
it. Memory stays within twice what the buckets need, with a layer per doubling.

The probes run in the C kernel when it is built (a check probes about 24 buckets and files
about 19); the Python loops below set and test the same bits.
"""

from __future__ import annotations

import struct
from typing import Iterable

import xxhash

from ..text import kernel

BITS_PER_KEY = 16  # 8 to 16 bits (a power of two); two probes: 1.4-5% of absent buckets still read
# A saved filter starts with this; one of another layout or hash is built again.
_MAGIC = b"BF\x00\x02"  # version 2: xxh64 positions (version 1, without magic, used xxh3)
_HEAD = struct.Struct(">4sQI")  # magic, last document id covered, number of layers
_LAYER = struct.Struct(">QQ")  # capacity, buckets added; then the bits


def _bits_for(capacity: int) -> int:
    """A power of two (positions are masked, not divided) of at most BITS_PER_KEY a bucket."""
    return 1 << (capacity * BITS_PER_KEY).bit_length() - 1


class _Layer:
    def __init__(self, capacity: int, added: int = 0, bits: bytearray | None = None):
        self.capacity = max(1 << 16, capacity)
        self.mask = _bits_for(self.capacity) - 1
        self.bits = bits if bits is not None else bytearray((self.mask + 1) >> 3)
        self.added = added


class BucketFilter:
    def __init__(self, capacity: int, last_id: int = 0, layers: list[_Layer] | None = None):
        self.layers = layers or [_Layer(capacity)]
        self.last_id = last_id  # the filter holds every bucket of the documents up to this id
        self.unsaved = layers is None  # built or added to since it was read
        self._probes = [(layer.mask, layer.bits) for layer in reversed(self.layers)]

    def add(self, bucket: bytes) -> None:
        self.add_all([bucket])

    def add_all(self, buckets: Iterable[bytes], compiled: bool = True) -> None:
        """``compiled=False`` skips the C kernel (tests compare the two)."""
        pending = list(buckets)
        while pending:
            layer = self.layers[-1]
            if layer.added >= layer.capacity:
                layer = _Layer(sum(old.capacity for old in self.layers))
                self.layers.append(layer)
                self._probes.insert(0, (layer.mask, layer.bits))
            room = layer.capacity - layer.added
            now, pending = pending[:room], pending[room:]
            if compiled and kernel is not None:
                kernel.bloom_add(layer.mask, layer.bits, now)
            else:
                mask, bits = layer.mask, layer.bits
                for bucket in now:
                    h = xxhash.xxh64_intdigest(bucket)
                    i, j = h & mask, (h >> 32) & mask
                    bits[i >> 3] |= 1 << (i & 7)
                    bits[j >> 3] |= 1 << (j & 7)
            layer.added += len(now)
        self.unsaved = True

    def may_hold(self, bucket: bytes) -> bool:
        return self.may_hold_each([bucket])[0]

    def may_hold_each(self, buckets: list[bytes], compiled: bool = True) -> list[bool]:
        """For each bucket, False if it is surely not in the store. One call takes all the
        buckets of a check: a call per bucket costs half as much again."""
        if compiled and kernel is not None:
            return kernel.bloom_holds(self._probes, buckets)
        out = []
        for bucket in buckets:
            h = xxhash.xxh64_intdigest(bucket)
            for mask, bits in self._probes:
                i, j = h & mask, (h >> 32) & mask
                if bits[i >> 3] >> (i & 7) & 1 and bits[j >> 3] >> (j & 7) & 1:
                    out.append(True)
                    break
            else:
                out.append(False)
        return out

    def to_bytes(self) -> bytes:
        parts = [_HEAD.pack(_MAGIC, self.last_id, len(self.layers))]
        for layer in self.layers:
            parts += [_LAYER.pack(layer.capacity, layer.added), layer.bits]
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes) -> "BucketFilter | None":
        """The saved filter, or None when the bytes are not one (then build it again)."""
        if len(data) < _HEAD.size:
            return None
        magic, last_id, count = _HEAD.unpack_from(data)
        if magic != _MAGIC:
            return None
        offset, layers = _HEAD.size, []
        for _ in range(count):
            if len(data) < offset + _LAYER.size:
                return None
            capacity, added = _LAYER.unpack_from(data, offset)
            offset += _LAYER.size
            size = _bits_for(max(1 << 16, capacity)) >> 3
            if len(data) < offset + size:
                return None
            layers.append(_Layer(capacity, added, bytearray(data[offset : offset + size])))
            offset += size
        if not layers or offset != len(data):
            return None
        return cls(0, last_id, layers)
