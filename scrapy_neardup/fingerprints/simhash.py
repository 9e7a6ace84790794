"""64-bit SimHash over weighted tokens, and the permuted tables that find near fingerprints.

The bit arithmetic is done with numpy on whole arrays: no Python loop over the 64 bits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations, pairwise

import numpy as np

BITS = 64


def simhash(feature_hashes: np.ndarray, weights: np.ndarray) -> int:
    """Charikar SimHash: bit i is set when the weights of features with bit i set outweigh the rest.

    ``feature_hashes`` is a uint64 array, ``weights`` an array of the same length (the
    fingerprint uses integers, whose sums are exact in any order).
    """
    if len(feature_hashes) == 0:
        return 0
    little = np.ascontiguousarray(feature_hashes, dtype="<u8")
    bits = np.unpackbits(little.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    set_weight = weights @ bits  # per bit: weight of the features that have it set
    chosen = np.packbits(2 * set_weight > weights.sum(), bitorder="little")
    return int.from_bytes(chosen.tobytes(), "little")


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def hamming_many(fingerprint: int, others: Sequence[int]) -> np.ndarray:
    """Hamming distances from ``fingerprint`` to each of ``others``, vectorised."""
    x = np.asarray(others, dtype=np.uint64) ^ np.uint64(fingerprint)
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)


class PermutedTables:
    """Bucket keys such that two fingerprints within Hamming distance ``k`` share one.

    The 64 bits are cut into ``k + match`` blocks. At most ``k`` blocks differ between two
    fingerprints within distance ``k``, so at least ``match`` blocks agree exactly
    (pigeonhole); one table per choice of ``match`` blocks keys on those blocks. With
    k = 3 and match = 2: 5 blocks, 10 tables, keys of about 26 bits, so a table bucket holds
    about N / 2**26 unrelated documents even at millions stored.
    """

    def __init__(self, k: int = 3, match: int = 2, bits: int = BITS):
        if not 0 <= k < bits // 4:
            raise ValueError(f"Hamming distance must be between 0 and {bits // 4 - 1}, got {k}")
        self.k = k
        self.match = match
        self.blocks = k + match
        edges = [int(e) for e in np.linspace(0, bits, self.blocks + 1).round()]
        masks = [((1 << (hi - lo)) - 1) << lo for lo, hi in pairwise(edges)]
        self._tables = [
            (b"h" + bytes([number]), sum(masks[block] for block in chosen))
            for number, chosen in enumerate(combinations(range(self.blocks), match))
        ]

    @property
    def count(self) -> int:
        return len(self._tables)

    def keys(self, fingerprint: int) -> list[bytes]:
        """One bucket key per table: "h", the table number, then the fingerprint's kept bits."""
        return [prefix + (fingerprint & mask).to_bytes(8, "big") for prefix, mask in self._tables]


def near(fingerprint: int, others: Iterable[int], k: int) -> list[int]:
    """The fingerprints among ``others`` within distance ``k`` (a reference for tests)."""
    return [o for o in others if hamming(fingerprint, o) <= k]
