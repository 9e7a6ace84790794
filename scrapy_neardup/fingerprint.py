"""From text to a document fingerprint: nshash sentence keys, SimHash and a shingle sketch.

The :class:`Recipe` names everything that changes a fingerprint's bits. A store records it,
so a store built with one recipe is never silently read with another (jieba and jieba-rs
agree on tokens today, but a dictionary upgrade would shift every SimHash).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import asdict, dataclass, field

import numpy as np
import xxhash

from .simhash import simhash
from .sketch import Sketch
from .text import Tokenizer, content_chars, get_tokenizer, normalize, split_sentences

# Bump when normalisation or splitting changes in a way that changes fingerprints.
TEXT_VERSION = 1

# Function words that carry no topic; jieba's IDF table gives them low weight already,
# leaving them out also makes the SimHash of short texts less noisy.
STOP_WORDS = frozenset(
    "的 了 在 是 和 与 及 或 也 都 就 而 又 并 对 把 被 让 给 从 向 到 为 以 于 之 其 这 那 "
    "一个 我们 他们 你们 它们 自己 没有 不是 这个 那个 就是 还是 以及 或者 但是 因为 所以 如果 "
    "the a an of to and or in on at for is are was were be by with as it this that from".split()
)


@dataclass(frozen=True)
class Recipe:
    """Everything that decides a fingerprint's value; stored with the store and checked."""

    tokenizer: str = "auto"
    nshash_n: int = 5  # longest sentences used as keys
    simhash_k: int = 3  # Hamming distance for SimHash candidates
    shingle_width: int = 5
    sketch_size: int = 128
    hash: str = "xxh64"
    simhash_bits: int = 64
    text_version: int = TEXT_VERSION

    def resolved(self) -> "Recipe":
        """The same recipe with ``auto`` replaced by the tokenizer that will be used."""
        from .text import default_tokenizer_name

        if self.tokenizer in ("", "auto"):
            return Recipe(**{**asdict(self), "tokenizer": default_tokenizer_name()})
        return self

    def as_dict(self) -> dict:
        return asdict(self)

    def __post_init__(self) -> None:
        if not 1 <= self.nshash_n <= 32:
            raise ValueError(f"nshash n must be between 1 and 32, got {self.nshash_n}")
        if not 0 <= self.simhash_k <= 15:
            raise ValueError(f"SimHash Hamming distance must be between 0 and 15, got {self.simhash_k}")
        if not 2 <= self.shingle_width <= 16:
            raise ValueError(f"shingle width must be between 2 and 16, got {self.shingle_width}")
        if not 16 <= self.sketch_size <= 4096:
            raise ValueError(f"sketch size must be between 16 and 4096, got {self.sketch_size}")


@dataclass
class Fingerprint:
    sentence_keys: list[int]  # sentence hashes, longest sentence first, distinct
    simhash: int
    sketch: Sketch
    chars: int  # content characters
    tokens: int  # weighted tokens that went into the SimHash
    extra: dict = field(default_factory=dict)


class _Features:
    """Token -> (64-bit hash, IDF) with a cache, so each distinct word is hashed once."""

    def __init__(self) -> None:
        self._idf: dict[str, float] = {}
        self._default_idf = 0.0
        self._cache: dict[str, tuple[int, float]] = {}
        self._load_idf()

    def _load_idf(self) -> None:
        import jieba

        path = os.path.join(os.path.dirname(jieba.__file__), "analyse", "idf.txt")
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                word, _, value = line.rstrip("\n").partition(" ")
                if value:
                    self._idf[word] = float(value)
        values = sorted(self._idf.values())
        self._default_idf = values[len(values) // 2] if values else 10.0

    def lookup(self, token: str) -> tuple[int, float] | None:
        cached = self._cache.get(token)
        if cached is None:
            if token in STOP_WORDS or not content_chars(token):
                cached = (0, 0.0)
            else:
                cached = (xxhash.xxh64_intdigest(token.encode("utf-8")), self._idf.get(token, self._default_idf))
            if len(self._cache) > 2_000_000:  # bound memory on endless crawls
                self._cache.clear()
            self._cache[token] = cached
        return cached if cached[1] > 0 else None


_FEATURES: _Features | None = None


def _features() -> _Features:
    global _FEATURES
    if _FEATURES is None:
        _FEATURES = _Features()
    return _FEATURES


class Fingerprinter:
    """Computes :class:`Fingerprint` objects for one :class:`Recipe`."""

    def __init__(self, recipe: Recipe | None = None, tokenizer: Tokenizer | None = None):
        self.recipe = (recipe or Recipe()).resolved()
        self.tokenizer = tokenizer or get_tokenizer(self.recipe.tokenizer)
        self.features = _features()

    def fingerprint(self, text: str) -> Fingerprint:
        normal = normalize(text)
        sentences = split_sentences(normal)
        chars = content_chars(normal)
        return Fingerprint(
            sentence_keys=self._sentence_keys(sentences),
            simhash=self._simhash(normal),
            sketch=Sketch.of(chars, self.recipe.sketch_size, self.recipe.shingle_width),
            chars=len(chars),
            tokens=0,
        )

    def _sentence_keys(self, sentences: list[str]) -> list[int]:
        # Keep twice n candidates: the store skips boilerplate sentences and takes the next.
        ranked = sorted(sentences, key=len, reverse=True)
        keys: list[int] = []
        for sentence in ranked:
            key = xxhash.xxh64_intdigest(sentence.encode("utf-8"))
            if key not in keys:
                keys.append(key)
                if len(keys) == 2 * self.recipe.nshash_n:
                    break
        return keys

    def _simhash(self, normal: str) -> int:
        counts = Counter(self.tokenizer.cut(normal))
        hashes, weights = [], []
        for token, tf in counts.items():
            feature = self.features.lookup(token)
            if feature is not None:
                hashes.append(feature[0])
                weights.append(feature[1] * (1.0 + math.log(tf)))
        if not hashes:
            return 0
        return simhash(np.array(hashes, dtype=np.uint64), np.array(weights, dtype=np.float64))
