"""The recipe of a fingerprint: every choice that decides its bits, stored with a store.

A module of its own, without numpy or a tokenizer, so that what only names a recipe (the
command line's options, a store's meta) starts without loading them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

# Bump when normalisation, splitting or weighting changes in a way that changes fingerprints.
# 2: SimHash weights are integers (exact sums, the same bits in C and numpy).
# 3: sketch keys keep 40 bits of their shingle's hash (were the sketch's 32).
# 4: Traditional and regional variant characters fold to Simplified.
# 5: site notices and credit lines are left out (notices.py).
TEXT_VERSION = 5

# Sketch keys a fingerprint carries (when its recipe has any): the detector files the first
# ``Recipe.sketch_keys`` of a text and more of a short one (``Thresholds.short_sketch_keys``).
# The keys are the smallest shingle hashes in order, so the first few are the same either way.
MAX_SKETCH_KEYS = 16


@dataclass(frozen=True)
class Recipe:
    """Everything that decides a fingerprint's value; stored with the store and checked.

    ``tokenizer`` chooses an implementation and is not part of the stored recipe: what is
    stored is ``tokens``, the dictionary and rules it cuts by (:func:`.text.token_rules`),
    so a store written with jieba opens with rjieba and the other way round.
    """

    tokenizer: str = field(default="auto", compare=False)
    nshash_n: int = 5  # longest sentences used as keys
    simhash_k: int = 3  # Hamming distance for SimHash candidates
    simhash_sentences: int = 3  # SimHash over the tokens of this many longest sentences (0: all)
    shingle_width: int = 5
    sketch_size: int = 128
    sketch_keys: int = 4  # smallest shingle hashes used as bucket keys
    hash: str = "xxh64"
    simhash_bits: int = 64
    text_version: int = TEXT_VERSION
    tokens: str = ""  # filled by resolved(): the tokenizer's dictionary and rules

    def resolved(self) -> Recipe:
        """The same recipe with ``auto`` replaced by the tokenizer that will be used, and
        ``tokens`` by what that tokenizer cuts by (cached, else loading it)."""
        from .rules_cache import tokenizer_rules  # numpy and the tokenizer: on first use
        from .text import default_tokenizer_name

        name = default_tokenizer_name() if self.tokenizer in ("", "auto") else self.tokenizer
        return replace(self, tokenizer=name, tokens=self.tokens or tokenizer_rules(name))

    def as_dict(self) -> dict:
        """The stored form: every field that decides a fingerprint's bits."""
        stored = asdict(self)
        del stored["tokenizer"]
        return stored

    def __post_init__(self) -> None:
        if not 1 <= self.nshash_n <= 32:
            raise ValueError(f"nshash n must be between 1 and 32, got {self.nshash_n}")
        if not 0 <= self.simhash_k <= 15:
            raise ValueError(f"SimHash Hamming distance must be between 0 and 15, got {self.simhash_k}")
        if not 0 <= self.simhash_sentences <= 1000:
            raise ValueError(f"SimHash sentences must be between 0 and 1000, got {self.simhash_sentences}")
        if not 2 <= self.shingle_width <= 16:
            raise ValueError(f"shingle width must be between 2 and 16, got {self.shingle_width}")
        if not 0 <= self.sketch_keys <= 16:
            raise ValueError(f"sketch keys must be between 0 and 16, got {self.sketch_keys}")
        if not 16 <= self.sketch_size <= 4096:
            raise ValueError(f"sketch size must be between 16 and 4096, got {self.sketch_size}")
