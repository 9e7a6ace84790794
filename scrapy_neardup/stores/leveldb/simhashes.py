"""Each stored document's SimHash by id, kept beside the bucket index, so that a check need not
read the record of a SimHash bucket member only to find it farther than the distance allowed.

At millions of documents most members of a lookup's SimHash buckets share the bucket's bits by
chance and differ in the others; the verdict rule passes over them, but each cost a record read
(a LevelDB read and a parse). A document's SimHash never changes and an id is never given out
twice, so a value once known stays true: the file may lack the newest documents (a run that
was killed) but holds nothing wrong, and an id it does not know is read as before.

The file is written whole at close, and between closes each flush of the bucket index appends
the values it covers as a segment with its own checksum: a run that is killed keeps what it
had learnt (otherwise every SimHash member of every lookup would cost a record read until the
next clean close). A segment cut short ends what is read.

A value's low :data:`SIGNATURE_BITS` hold the document's *signature* instead of its SimHash's
low bits: a bit for each bucket it is filed under but its SimHash tables' (a sentence's, its
key's), from the upper half of the bucket's hash. The bucket index keys buckets on the lower
32 bits, so at millions of documents a lookup meets members of other buckets with the same key,
each a record read only to be passed over: a member whose signature lacks the bucket's bit is
one of them, and is left out unread. The SimHash bits kept are many more than a SimHash table
shares, so a member far in 64 bits is far in them too (the rare one that is not is read). A
file of the earlier layout (whole SimHashes) is read with every signature bit set: its
documents may be in any bucket, as before.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable

import numpy as np
import xxhash

from ...fingerprints.kernel import kernel
from .indexfiles import replace_whole

FILE = "simhashes"
_HEAD = struct.Struct("<8sQQQ")  # magic, first id held, ids held, checksum of the values
_MAGIC = b"NDSIMH02"
_SEGMENT = b"NDSIMS02"  # an appended segment: the same head, its first id following the last held
_EARLIER = (b"NDSIMH01", b"NDSIMS01")  # the same of a file of whole SimHashes, no signatures
_UNKNOWN = 0  # a value of 0 is taken as unknown: that document's record is read
SIGNATURE_BITS = 20
_SIGNATURE = (1 << SIGNATURE_BITS) - 1
_KEPT = ((1 << 64) - 1) ^ _SIGNATURE  # the SimHash bits a value keeps
UNSIGNED = b"h"  # the first byte of a SimHash table's bucket: no signature bit


def signature_bit(bucket: bytes) -> int:
    """A bucket's bit of a signature: of the upper half of its xxh64, which the bucket index
    does not key on; -1 for a SimHash table's bucket (none)."""
    return -1 if bucket[:1] == UNSIGNED else (xxhash.xxh64_intdigest(bucket) >> 32) % SIGNATURE_BITS


def signature(buckets: list[bytes], compiled: bool = True) -> int:
    """The signature of a document filed under ``buckets``: the bit of each (the kernel's
    loop when built; ``compiled=False``: tests compare the two)."""
    if compiled and kernel is not None:
        return kernel.bucket_signature(buckets, SIGNATURE_BITS, UNSIGNED[0])
    return sum({1 << bit for bit in map(signature_bit, buckets) if bit >= 0})


class SimHashes:
    """SimHashes of ids ``base`` on, in one array (8 bytes a document, grown by an eighth).

    The first id, the array and how much of it is used are one tuple, replaced whole: a purge
    in another thread (:meth:`forget_below`) never pairs an array with another's first id. A
    value written meanwhile into the array being replaced is lost, which makes it unknown, not
    wrong."""

    def __init__(self, base: int = 1, values: np.ndarray | None = None, used: int = 0) -> None:
        values = values if values is not None else np.zeros(0, dtype=np.uint64)
        self._state = (base, values, used)
        # the last id the file holds, read back whole; 0 while the file must be written whole
        self._saved_upto = 0

    def put(self, doc_id: int, simhash: int, buckets: list[bytes]) -> None:
        """Keep the SimHash and the signature of a document filed under ``buckets``."""
        value = (simhash & _KEPT) | signature(buckets)
        base, values, used = self._state
        at = doc_id - base
        if at < 0:
            return
        if at >= len(values):
            grown = np.zeros(max(at + 1, len(values) + len(values) // 8, 1024), dtype=np.uint64)
            grown[:used] = values[:used]
            values = grown
        values[at] = value
        self._state = (base, values, max(used, at + 1))

    def knows(self, doc_id: int) -> bool:
        """Whether the document's value is held (put, or read from the file)."""
        base, values, used = self._state
        return 0 <= doc_id - base < used and int(values[doc_id - base]) != _UNKNOWN

    def may_be_filed(self, doc_id: int, bit: int) -> bool:
        """Whether document ``doc_id`` may be filed under a bucket of signature bit ``bit``
        (:func:`signature_bit`): its value is unknown or has the bit (the kernel's lookups ask
        the same of each member)."""
        base, values, used = self._state
        if bit < 0 or not 0 <= doc_id - base < used:
            return True
        value = int(values[doc_id - base])
        return value == _UNKNOWN or bool(value >> bit & 1)

    def signed(self) -> tuple[np.ndarray, int, int]:
        """The values, the first id and how many are used, as the bucket index's lookups
        read the signatures (of one state: a purge meanwhile replaces it whole)."""
        base, values, used = self._state
        return values, base, used

    def far(self, doc_ids: Iterable[int], simhash: int, k: int, compiled: bool = True) -> set[int]:
        """Those of ``doc_ids`` whose SimHash is known and differs from ``simhash`` in more than
        ``k`` of the bits kept; the C kernel's loop when built (``compiled=False``: tests
        compare the two)."""
        base, values, used = self._state
        if compiled and kernel is not None:
            return kernel.simhashes_far(values, base, used, doc_ids, simhash, k, _KEPT)
        out = set()
        for doc_id in doc_ids:
            at = doc_id - base
            if 0 <= at < used:
                value = int(values[at])
                if value != _UNKNOWN and ((value ^ simhash) & _KEPT).bit_count() > k:
                    out.add(doc_id)
        return out

    def forget_below(self, floor: int) -> None:
        """Let go of ids below ``floor`` (purged), once they are half of what is held."""
        base, values, used = self._state
        drop = floor - base
        if drop <= 0 or drop < used // 2:
            return
        drop = min(drop, used)
        self._state = (base + drop, values[drop:used].copy(), used - drop)

    @property
    def memory_bytes(self) -> int:
        return self._state[1].nbytes

    def save(self, folder: str) -> None:
        """Write the values, through a new file renamed over the old one."""
        base, held, used = self._state
        values = held[:used].astype("<u8").tobytes()
        head = _HEAD.pack(_MAGIC, base, used, xxhash.xxh64_intdigest(values))
        self._saved_upto = 0
        replace_whole(os.path.join(folder, FILE), [head, values], sync=True)
        self._saved_upto = base + used - 1

    def append_upto(self, folder: str, upto: int) -> None:
        """Add the values of the ids after those the file holds, up to ``upto``, as a segment
        (the whole file when it was not read back whole, or a purge passed what it holds). Not
        synced: a segment lost or cut short only leaves its ids unknown."""
        base, held, used = self._state
        first = self._saved_upto + 1
        upto = min(upto, base + used - 1)
        if upto < first:
            return
        if self._saved_upto == 0 or first < base:
            self.save(folder)
            return
        values = held[first - base : upto - base + 1].astype("<u8").tobytes()
        head = _HEAD.pack(_SEGMENT, first, upto - first + 1, xxhash.xxh64_intdigest(values))
        self._saved_upto = 0  # until the segment is whole on the file
        with open(os.path.join(folder, FILE), "ab") as handle:
            handle.write(head + values)
        self._saved_upto = upto

    @classmethod
    def load(cls, folder: str, last_id: int) -> SimHashes:
        """The saved values and the segments after them; none (every id unknown) when the file
        is missing, damaged, or holds ids the store never gave out (a store restored from an
        older copy). Segments are read up to the first one that is cut short or damaged."""
        try:
            with open(os.path.join(folder, FILE), "rb") as handle:
                data = handle.read()
        except OSError:
            return cls()
        parts: list[tuple[int, bytes]] = []
        at, end, whole = 0, 0, True  # end: the id after the last one read
        layout = (_MAGIC, _SEGMENT) if data[:8] == _MAGIC else _EARLIER
        while at < len(data):
            head = data[at : at + _HEAD.size]
            if len(head) < _HEAD.size:
                whole = False
                break
            magic, first, count, checksum = _HEAD.unpack(head)
            values = data[at + _HEAD.size : at + _HEAD.size + 8 * count]
            if (
                magic != layout[1 if parts else 0]
                or (parts and first != end)
                or len(values) != 8 * count
                or xxhash.xxh64_intdigest(values) != checksum
            ):
                whole = False
                break
            parts.append((first, values))
            at, end = at + _HEAD.size + 8 * count, first + count
        if not parts:
            return cls()
        base = parts[0][0]
        count = sum(len(values) // 8 for _, values in parts)
        if base + count - 1 > last_id:
            return cls()
        held = np.zeros(count + count // 8 + 1024, dtype=np.uint64)  # room for the documents to come
        held[:count] = np.frombuffer(b"".join(values for _, values in parts), dtype="<u8")
        if layout == _EARLIER:  # whole SimHashes: every signature bit set, and the file written anew
            known = held[:count] != _UNKNOWN
            held[:count][known] = (held[:count][known] & np.uint64(_KEPT)) | np.uint64(_SIGNATURE)
            whole = False
        loaded = cls(base, held, count)
        loaded._saved_upto = base + count - 1 if whole else 0
        return loaded
