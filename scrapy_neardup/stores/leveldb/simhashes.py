"""Each stored document's SimHash by id, kept beside the bucket index, so that a check need not
read the record of a SimHash bucket member only to find it farther than the distance allowed.

At millions of documents most members of a lookup's SimHash buckets share the bucket's bits by
chance and differ in the others; the verdict rule passes over them, but each cost a record read
(a LevelDB read and a parse). A document's SimHash never changes and an id is never given out
twice, so a value once known stays true: the file saved at close may lack the newest documents
(a run that was killed) but holds nothing wrong, and an id it does not know is read as before.
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
        replace_whole(os.path.join(folder, FILE), [head, values], sync=True)

    @classmethod
    def load(cls, folder: str, last_id: int) -> SimHashes:
        """The saved values; none (every id unknown) when the file is missing, damaged, or holds
        ids the store never gave out (a store restored from an older copy)."""
        try:
            with open(os.path.join(folder, FILE), "rb") as handle:
                head = handle.read(_HEAD.size)
                values = handle.read()
        except OSError:
            return cls()
        if len(head) < _HEAD.size:
            return cls()
        magic, base, count, checksum = _HEAD.unpack(head)
        if magic != _MAGIC or len(values) != 8 * count or base + count - 1 > last_id:
            return cls()
        if xxhash.xxh64_intdigest(values) != checksum:
            return cls()
        held = np.zeros(count + count // 8 + 1024, dtype=np.uint64)  # room for the documents to come
        held[:count] = np.frombuffer(values, dtype="<u8")
        return cls(base, held, count)
