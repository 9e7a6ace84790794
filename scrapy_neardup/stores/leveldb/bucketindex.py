"""The buckets of a LevelDB namespace, held in memory: bucket -> the ids of its documents.

Filing a document under its ~19 buckets as LevelDB keys cost ~19 reads and puts a check,
and the compaction of tens of millions of small keys; the bucket map is small enough for
memory (8 bytes an entry, 200-400 bytes a document as the table fills and doubles), so
LevelDB keeps only the records and this index answers every lookup with no read at all.

A table of 8-byte slots: a bucket's key (the low 32 bits of the xxh64 of its bytes) and a
document id, by linear probing; id 0 marks an empty slot. Two buckets sharing 32 bits
(rarely) only add a candidate, which verification then rejects. The table is saved to a
file when the store closes, with the last document id it covers; after a crash the
documents written since are filed again from their records (see store.py).

The C kernel runs the probes when it is built; the Python below does the same on the
same table (tests compare the two).
"""

from __future__ import annotations

import os
import struct
import sys

import xxhash

from ...fingerprints.kernel import kernel
from .indexfiles import NOFOLLOW, replace_whole

MIN_SLOTS = 1 << 12
MAX_LOAD = 0.75  # linear probing stays short (a few slots, one cache line) below this
BUCKET_CAP = 1000  # a bucket this full (a degenerate SimHash) takes no more members
# Slots are saved in the machine's byte order; a file from the other order is filed again.
_MAGIC = b"NDIX" + (b"L" if sys.byteorder == "little" else b"B") + b"\x01"
_HEAD = struct.Struct(">6sQQQQ")  # magic, last document id covered, entries, slots, checksum
# A link planted at the index's names is never followed (where the OS can tell).


class BucketIndex:
    def __init__(self, slots: int = MIN_SLOTS, last_id: int = 0, compiled: bool = True):
        """``compiled=False`` skips the C kernel (tests compare the two)."""
        self.table = bytearray(8 * _power_of_two(slots))
        self.entries = 0
        self.last_id = last_id  # every document up to this id is filed
        self.compiled = compiled and kernel is not None
        self.unsaved = True  # changed since it was saved or loaded

    @property
    def slots(self) -> int:
        return len(self.table) // 8

    def members_each(self, buckets: list[bytes], limit: int) -> list[list[int]]:
        """For each bucket, its oldest (lowest) ``limit`` document ids."""
        if self.compiled:
            return kernel.index_find(self.table, buckets, limit)
        words, mask = memoryview(self.table).cast("I"), self.slots - 1
        out = []
        for bucket in buckets:
            key = _key(bucket)
            slot, ids = key & mask, []
            while words[2 * slot + 1]:
                if words[2 * slot] == key:
                    ids.append(words[2 * slot + 1])
                slot = (slot + 1) & mask
            out.append(sorted(ids)[:limit])
        return out

    def add(self, buckets: list[bytes], doc_id: int) -> None:
        self.unsaved = True
        if (self.entries + len(buckets)) > MAX_LOAD * self.slots:
            self._grow(self.entries + len(buckets))
        if self.compiled:
            self.entries += kernel.index_add(self.table, buckets, doc_id, BUCKET_CAP)
            return
        if not 0 < doc_id < 1 << 32:
            raise ValueError("an index holds document ids from 1 to 2**32 - 1")
        for bucket in buckets:
            self.entries += _put(memoryview(self.table).cast("I"), self.slots - 1, _key(bucket), doc_id, BUCKET_CAP)

    def remove(self, buckets: list[bytes], doc_id: int) -> None:
        self.unsaved = True
        if self.compiled:
            self.entries -= kernel.index_remove(self.table, buckets, doc_id)
            return
        words, mask = memoryview(self.table).cast("I"), self.slots - 1
        for bucket in buckets:
            key = _key(bucket)
            slot = key & mask
            while words[2 * slot + 1]:
                if words[2 * slot] == key and words[2 * slot + 1] == doc_id:
                    _delete(words, mask, slot)
                    self.entries -= 1
                    break
                slot = (slot + 1) & mask

    def _grow(self, wanted: int) -> None:
        bigger = bytearray(8 * _power_of_two(int(wanted / MAX_LOAD) + 1))
        if self.compiled:
            kernel.index_move(self.table, bigger)
        else:
            old, new = memoryview(self.table).cast("I"), memoryview(bigger).cast("I")
            mask = len(bigger) // 8 - 1
            for slot in range(self.slots):
                if old[2 * slot + 1]:
                    _put(new, mask, old[2 * slot], old[2 * slot + 1], 1 << 62)
        self.table = bigger

    def save(self, path: str) -> None:
        """Write the table to ``path``, whole or not at all (``indexfiles.replace_whole``)."""
        head = _HEAD.pack(_MAGIC, self.last_id, self.entries, self.slots, xxhash.xxh64_intdigest(self.table))
        replace_whole(path, [head, self.table], sync=False)
        self.unsaved = False

    @classmethod
    def load(cls, path: str) -> BucketIndex | None:
        """The saved index, or None when there is none or it is not whole (then file again)."""
        try:
            with os.fdopen(os.open(path, os.O_RDONLY | NOFOLLOW), "rb") as handle:
                head = handle.read(_HEAD.size)
                if len(head) != _HEAD.size:
                    return None
                magic, last_id, entries, slots, checksum = _HEAD.unpack(head)
                if magic != _MAGIC or slots < 1 or slots & (slots - 1):
                    return None
                table = bytearray(8 * slots)
                if handle.readinto(table) != len(table) or handle.read(1):
                    return None
        except OSError:
            return None
        if xxhash.xxh64_intdigest(table) != checksum:
            return None
        index = cls(MIN_SLOTS, last_id)
        index.table, index.entries, index.unsaved = table, entries, False
        return index


def _power_of_two(wanted: int) -> int:
    return max(MIN_SLOTS, 1 << (max(1, wanted) - 1).bit_length())


def _key(bucket: bytes) -> int:
    return xxhash.xxh64_intdigest(bucket) & 0xFFFFFFFF


def _put(words: memoryview, mask: int, key: int, doc_id: int, cap: int) -> int:
    slot, held = key & mask, 0
    while words[2 * slot + 1]:
        if words[2 * slot] == key:
            held += 1
            if held >= cap:
                return 0
        slot = (slot + 1) & mask
    words[2 * slot], words[2 * slot + 1] = key, doc_id
    return 1


def _delete(words: memoryview, mask: int, hole: int) -> None:
    """Empty ``hole`` and shift later entries of its run back, so no run is cut short."""
    words[2 * hole + 1] = 0
    slot = hole
    while True:
        slot = (slot + 1) & mask
        if not words[2 * slot + 1]:
            return
        home = words[2 * slot] & mask
        stays = hole < home <= slot if hole <= slot else (home > hole or home <= slot)
        if not stays:
            words[2 * hole], words[2 * hole + 1] = words[2 * slot], words[2 * slot + 1]
            words[2 * slot + 1] = 0
            hole = slot
