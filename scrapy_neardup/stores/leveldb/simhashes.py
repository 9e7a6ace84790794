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
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable

import numpy as np
import xxhash

from .indexfiles import replace_whole

FILE = "simhashes"
_HEAD = struct.Struct("<8sQQQ")  # magic, first id held, ids held, checksum of the values
_MAGIC = b"NDSIMH01"
_SEGMENT = b"NDSIMS01"  # an appended segment: the same head, its first id following the last held
_UNKNOWN = 0  # a SimHash of 0 is taken as unknown: that document's record is read


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

    def put(self, doc_id: int, simhash: int) -> None:
        base, values, used = self._state
        at = doc_id - base
        if at < 0:
            return
        if at >= len(values):
            grown = np.zeros(max(at + 1, len(values) + len(values) // 8, 1024), dtype=np.uint64)
            grown[:used] = values[:used]
            values = grown
        values[at] = simhash
        self._state = (base, values, max(used, at + 1))

    def far(self, doc_ids: Iterable[int], simhash: int, k: int) -> set[int]:
        """Those of ``doc_ids`` whose SimHash is known and differs from ``simhash`` in more than
        ``k`` bits."""
        base, values, used = self._state
        out = set()
        for doc_id in doc_ids:
            at = doc_id - base
            if 0 <= at < used:
                value = int(values[at])
                if value != _UNKNOWN and (value ^ simhash).bit_count() > k:
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
        while at < len(data):
            head = data[at : at + _HEAD.size]
            if len(head) < _HEAD.size:
                whole = False
                break
            magic, first, count, checksum = _HEAD.unpack(head)
            values = data[at + _HEAD.size : at + _HEAD.size + 8 * count]
            if (
                magic != (_SEGMENT if parts else _MAGIC)
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
        loaded = cls(base, held, count)
        loaded._saved_upto = base + count - 1 if whole else 0
        return loaded
