"""An in-memory Bloom filter of the buckets a LevelDB namespace holds.

Most bucket lookups of a check ask for a bucket that does not exist (a new story), and
LevelDB answers those only after probing each level of its tree, which costs more as the
store grows; one probe of this filter answers most of them for a fraction of that. Every
bucket filed is added and none is ever taken out, so the filter never calls a held bucket
absent (which would lose a candidate): a bucket since emptied costs at worst one read.
"""

from __future__ import annotations

import struct

import xxhash

BITS_PER_KEY = 16  # two probes: about 1.4% of absent buckets still read when full
_HEAD = struct.Struct(">QQQ")  # last document id covered, capacity, buckets added


class BucketFilter:
    def __init__(self, capacity: int, last_id: int = 0, bits: bytearray | None = None, added: int = 0):
        self.capacity = max(1 << 16, capacity)
        size = 1 << (self.capacity * BITS_PER_KEY - 1).bit_length()  # a power of two: masks, no modulo
        self._mask = size - 1
        self._bits = bits if bits is not None else bytearray(size >> 3)
        self.added = added
        self.last_id = last_id  # the filter holds every bucket of the documents up to this id
        self.unsaved = bits is None  # built or added to since it was read

    @property
    def full(self) -> bool:
        return self.added > self.capacity

    def add(self, bucket: bytes) -> None:
        self.add_all([bucket])

    def add_all(self, buckets: list[bytes]) -> None:
        mask, bits = self._mask, self._bits
        for bucket in buckets:
            h = xxhash.xxh3_64_intdigest(bucket)
            i, j = h & mask, (h >> 32) & mask
            bits[i >> 3] |= 1 << (i & 7)
            bits[j >> 3] |= 1 << (j & 7)
        self.added += len(buckets)
        self.unsaved = True

    def may_hold(self, bucket: bytes) -> bool:
        return self.may_hold_each([bucket])[0]

    def may_hold_each(self, buckets: list[bytes]) -> list[bool]:
        """For each bucket, False if it is surely not in the store. One call takes all the
        buckets of a check: a call per bucket costs half as much again."""
        mask, bits, out = self._mask, self._bits, []
        for bucket in buckets:
            h = xxhash.xxh3_64_intdigest(bucket)
            i, j = h & mask, (h >> 32) & mask
            out.append(bool(bits[i >> 3] >> (i & 7) & 1 and bits[j >> 3] >> (j & 7) & 1))
        return out

    def to_bytes(self) -> bytes:
        return _HEAD.pack(self.last_id, self.capacity, self.added) + self._bits

    @classmethod
    def from_bytes(cls, data: bytes) -> "BucketFilter | None":
        """The saved filter, or None when the bytes are not one (then build it again)."""
        if len(data) < _HEAD.size:
            return None
        last_id, capacity, added = _HEAD.unpack_from(data)
        made = cls(capacity, last_id, bytearray(data[_HEAD.size :]), added)
        return made if len(made._bits) == made._mask + 1 >> 3 else None
