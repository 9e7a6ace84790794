"""From text to a document fingerprint: nshash sentence keys, SimHash and a shingle sketch.

The :class:`~.recipe.Recipe` names everything that changes a fingerprint's bits. A store records it,
so a store built with one recipe is never silently read with another. The tokenizer enters it
by what decides its tokens (dictionary and rules, checked by a probe text), not by its
implementation: jieba and rjieba share stores, a dictionary upgrade is refused.
"""

from __future__ import annotations

import functools
import math
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from itertools import repeat

import numpy as np
import xxhash

from . import text as text_module
from .kernel import kernel
from .notices import strip_notices
from .recipe import MAX_SKETCH_KEYS, TEXT_VERSION, Recipe
from .segment import SEPARATOR, joined_cut
from .simhash import simhash
from .sketch import SKETCH_KEY_BITS, Sketch, sketch_and_keys
from .storywords import StoryWords, story_words_later, story_words_of
from .tables import cached_arrays, code_signature, file_signature, package_version
from .text import (
    MIN_SENTENCE_CHARS,
    Sentences,
    Tokenizer,
    content_bytes,
    fold_codes,
    get_tokenizer,
    idf_path,
    sentences_of,
    span_key,
    text_tables,
    to_text,
)
from .titles import declared_hash, title_hash

# A word's SimHash weight is round(idf * (1 + ln tf) * WEIGHT_SCALE), an integer, so that its
# sums are exact whatever the order; tf counts beyond the factor table share its last factor.
WEIGHT_SCALE = 4096.0
TF_FACTORS = np.array([0.0] + [1.0 + math.log(tf) for tf in range(1, 64)])


# Lines whose tokens a Fingerprinter keeps (Fingerprinter.cut): a SimHash text is about three
# of them, so the last two or three thousand texts' (about 0.6 KB a line).
CUT_LINES = 8192


def _split_tokens(joined: str) -> list[str]:
    return joined.split(SEPARATOR) if joined else []


# Function words that carry no topic; jieba's IDF table gives them low weight already,
# leaving them out also makes the SimHash of short texts less noisy.
STOP_WORDS = frozenset(
    [
        "的",
        "了",
        "在",
        "是",
        "和",
        "与",
        "及",
        "或",
        "也",
        "都",
        "就",
        "而",
        "又",
        "并",
        "对",
        "把",
        "被",
        "让",
        "给",
        "从",
        "向",
        "到",
        "为",
        "以",
        "于",
        "之",
        "其",
        "这",
        "那",
        "一个",
        "我们",
        "他们",
        "你们",
        "它们",
        "自己",
        "没有",
        "不是",
        "这个",
        "那个",
        "就是",
        "还是",
        "以及",
        "或者",
        "但是",
        "因为",
        "所以",
        "如果",
        "the",
        "a",
        "an",
        "of",
        "to",
        "and",
        "or",
        "in",
        "on",
        "at",
        "for",
        "is",
        "are",
        "was",
        "were",
        "be",
        "by",
        "with",
        "as",
        "it",
        "this",
        "that",
        "from",
    ]
)


@dataclass
class Fingerprint:
    sentence_keys: list[int]  # sentence hashes, longest sentence first, distinct
    simhash: int
    sketch: Sketch
    chars: int  # content characters
    tokens: int  # weighted tokens that went into the SimHash
    # The smallest shingles' hashes (sketch.sketch_and_keys), tagged so that they never meet
    # a sentence hash. Two texts share their smallest shingle with probability equal to their
    # Jaccard resemblance (MinHash), so a reprint whose every long sentence was edited is
    # still found.
    sketch_keys: list[int] = field(default_factory=list)
    # The words the text repeats, where, and its figures: what tells a shared passage from a
    # shared story (storywords.py, engine.samestory).
    story_words: StoryWords = field(default_factory=StoryWords.empty)
    # The text itself, as normalised content characters: a page crawled again whose digest
    # differs was changed (an update), not seen again.
    digest: int = 0
    # What names the article the text is (titles.py): its headline's hash, given by the caller
    # (an item's title field), and the original title's its credit line declares (原标题：…);
    # 0 for none. A lead excerpt declaring its article's headline is one story with it.
    title: int = 0
    declared: int = 0

    def with_title(self, title: str | None) -> Fingerprint:
        """This fingerprint with the hash of its text's headline ``title``; itself without one."""
        value = title_hash(title)
        return replace(self, title=value) if value and value != self.title else self


def content_digest(content: np.ndarray) -> int:
    """A 64-bit hash of the content characters (folded, notices left out), never 0."""
    return xxhash.xxh64_intdigest(np.asarray(content, dtype="<u4").tobytes()) or 1


SKETCH_TAG = ((1 << (64 - SKETCH_KEY_BITS)) - 1) << SKETCH_KEY_BITS  # top 24 bits set


def sketch_keys_of(values: list[int]) -> list[int]:
    """Bucket keys of sketch key values: tagged, as the store files them beside sentence keys."""
    return [SKETCH_TAG | value for value in values]


_SKETCH_TOP = SKETCH_TAG >> SKETCH_KEY_BITS


def is_sketch_key(key: int) -> bool:
    """Sentence hashes look like this 1 time in 16 million; such a key is still a key, its
    matches are only reported as "sketch" rather than "nshash"."""
    return key >> SKETCH_KEY_BITS == _SKETCH_TOP


def sketch_keys_among(keys: Iterable[int]) -> set[int]:
    """The sketch keys of ``keys`` (:func:`is_sketch_key`), without a call for each."""
    return {key for key in keys if key >> SKETCH_KEY_BITS == _SKETCH_TOP}


def word_hash(word: str) -> int:
    """64-bit hash of a word (xxh64 of its UTF-8 bytes): the SimHash feature and IDF key."""
    return xxhash.xxh64_intdigest(word.encode("utf-8", "surrogatepass"))


def has_content(word: str) -> bool:
    """Words with a letter or digit are features; punctuation and spaces are not."""
    return word.isalnum() or any(char.isalnum() for char in word)


# Words of the IDF table looked up one by one (the most frequent: lowest IDF). On news text
# they are most of the distinct words; the rest are rare words, whose IDF lies in a narrow
# band at the top of the table, so they share one weight: the band's median. Looking every
# word up in the full table would cost a cache miss per step of a binary search.
COMMON_WORDS = 50_000


class _Features:
    """SimHash features of a token list: distinct words, their hashes and tf-idf weights.

    IDF comes from jieba's table (folded like the text); stop words weigh 0. The prepared
    table is cached (:mod:`.tables`): building it from the IDF file is most of a start-up.
    """

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self._hashes = arrays["hashes"]  # the common words' hashes, lowest IDF first
        self._idf = arrays["idf"]
        self.rare_idf = float(arrays["rare_idf"])
        self.table = arrays["table"]
        # The same slots as plain bytes for the kernel: numpy describes a structured array's
        # format for every buffer it hands out, which cost more than weighing a short text.
        self._table_bytes = self.table.view(np.uint8)
        self._words = arrays["words"]  # the common words, UTF-8, one a line
        self._rows: dict[str, int] | None = None

    @property
    def _row(self) -> dict[str, int]:
        """Row of each common word (the numpy path only; the C kernel looks up by hash)."""
        if self._rows is None:
            words = self._words.tobytes().decode("utf-8", "surrogatepass").split("\n")
            self._rows = {word: row for row, word in enumerate(words)}
        return self._rows

    def weigh(self, tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Hashes of the distinct content words of ``tokens`` and their integer weights,
        round(idf * (1 + ln tf) * WEIGHT_SCALE); words of weight 0 are left out."""
        counts = Counter(tokens)
        words = list(counts)
        tf = np.fromiter(counts.values(), dtype=np.intp, count=len(words))
        rows = np.array(list(map(self._row.get, words, repeat(-1))), dtype=np.intp)
        common = rows >= 0
        rare = [i for i in np.flatnonzero(~common).tolist() if has_content(words[i])]
        rare_hashes = np.fromiter((word_hash(words[i]) for i in rare), dtype=np.uint64, count=len(rare))
        hashes = np.concatenate((self._hashes[rows[common]], rare_hashes))
        idf = np.concatenate((self._idf[rows[common]], np.full(len(rare), self.rare_idf)))
        factors = TF_FACTORS[np.minimum(np.concatenate((tf[common], tf[rare])), len(TF_FACTORS) - 1)]
        weights = np.floor(idf * factors * WEIGHT_SCALE + 0.5).astype(np.int64)
        used = weights > 0
        return hashes[used], weights[used]

    def simhash(self, tokens: list[str], compiled: bool = True) -> tuple[int, int]:
        """SimHash of ``tokens`` and the number of weighted words in it."""
        if compiled and kernel is not None:
            return kernel.weigh(tokens, self._table_bytes, self.rare_idf, TF_FACTORS, WEIGHT_SCALE)
        hashes, weights = self.weigh(tokens)
        return simhash(hashes, weights), len(hashes)

    def simhash_of_lines(self, lines: list[str], compiled: bool = True) -> tuple[int, int]:
        """:meth:`simhash` of the tokens of ``lines`` as :meth:`Fingerprinter.cut_lines` gives
        them, each line's joined: the C kernel splits them, no list of tokens is made (the
        line breaks between them are no words)."""
        if compiled and kernel is not None:
            return kernel.weigh(lines, self._table_bytes, self.rare_idf, TF_FACTORS, WEIGHT_SCALE, ord(SEPARATOR))
        return self.simhash([token for line in lines for token in _split_tokens(line)], False)


def _hash_table(hashes: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """Open addressing (linear probing) of the common words by hash, for the C kernel.

    A slot is a word's hash and idf side by side (one cache miss per lookup); an idf of -1
    marks an empty slot.
    """
    size = 1 << max(4, (2 * len(hashes) - 1).bit_length())
    table = np.zeros(size, dtype=_SLOT)
    table["idf"] = -1.0
    slot_idf = table["idf"]
    mask = size - 1
    for value, weight in zip(hashes.tolist(), idf.tolist()):
        slot = value & mask
        while slot_idf[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = (value, weight)
    return table


_SLOT = np.dtype([("hash", np.uint64), ("idf", np.float64)])


def _build_features() -> dict[str, np.ndarray]:
    """The weight table's arrays from jieba's IDF file: the COMMON_WORDS lowest-IDF words
    (hashes, IDF, UTF-8 text, the C kernel's hash table) and the rare words' shared IDF."""
    words, values = [], []
    with open(idf_path(), encoding="utf-8") as handle:
        for line in handle:
            word, _, value = line.rstrip("\n").partition(" ")
            if value:
                words.append(word)
                values.append(float(value))
    # Fold all words in one pass (one call per word would take half a minute).
    folded = to_text(fold_codes("\n".join(words))).split("\n")
    if len(folded) == len(words):
        words = folded
    idf = {word: value for word, value in zip(words, values) if has_content(word)}
    idf.update(dict.fromkeys(STOP_WORDS, 0.0))
    ranked = sorted(idf, key=idf.__getitem__)
    common, rare = ranked[:COMMON_WORDS], ranked[COMMON_WORDS:]
    hashes = np.fromiter(map(word_hash, common), dtype=np.uint64, count=len(common))
    common_idf = np.fromiter(map(idf.__getitem__, common), dtype=np.float64, count=len(common))
    return {
        "hashes": hashes,
        "idf": common_idf,
        "rare_idf": np.array(float(np.median([idf[word] for word in rare])) if rare else 10.0),
        "table": _hash_table(hashes, common_idf),
        "words": np.frombuffer("\n".join(common).encode("utf-8", "surrogatepass"), dtype=np.uint8),
    }


_FEATURES: _Features | None = None


def _features() -> _Features:
    """The shared weight table, read from the cache or built on first use."""
    global _FEATURES
    if _FEATURES is None:
        path = idf_path()
        key = {
            "idf": file_signature(path),
            "jieba": package_version(os.path.dirname(os.path.dirname(path)), "jieba"),
            "text_version": TEXT_VERSION,
            "common_words": COMMON_WORDS,
            "stop_words": sorted(STOP_WORDS),
            "text_tables": text_module.text_tables_key(),
            "code": code_signature(__file__),
        }
        _FEATURES = _Features(cached_arrays("word-weights", key, _build_features))
    return _FEATURES


class Fingerprinter:
    """Computes :class:`Fingerprint` objects for one :class:`Recipe`."""

    def __init__(
        self,
        recipe: Recipe | None = None,
        tokenizer: Tokenizer | None = None,
        compiled: bool | None = None,
    ):
        self.recipe = (recipe or Recipe()).resolved()
        self.tokenizer = tokenizer or get_tokenizer(self.recipe.tokenizer)
        self.features = _features()
        self.sketch_keys = max(self.recipe.sketch_keys, MAX_SKETCH_KEYS) if self.recipe.sketch_keys else 0
        # compiled=False forces the numpy path (tests compare the two); None: C when built.
        self.compiled = kernel is not None if compiled is None else compiled and kernel is not None
        # A line's tokens are kept joined by a control character (folded text has none): one
        # string keeps in a tenth of the memory of the list.
        self._cut_line = functools.lru_cache(maxsize=CUT_LINES)(joined_cut(self.tokenizer))

    def cut(self, text: str) -> list[str]:
        """The tokens of ``text`` (folded): those of each of its lines, the line breaks between.

        A line break ends a block of the tokenizer (jieba cuts the runs of Chinese, letters and
        digits apart; folding left no "\\r" to join one to), so a text's tokens are its lines'
        joined. The SimHash text is a text's longest sentences, one a line, and a reprint
        repeats its original's: each line is cut once while among the last :data:`CUT_LINES`.
        """
        lines = iter(self.cut_lines(text))
        tokens = _split_tokens(next(lines))
        for line in lines:
            tokens.append("\n")
            tokens += _split_tokens(line)
        return tokens

    def cut_lines(self, text: str) -> list[str]:
        """The tokens of each line of ``text``, joined by a control character (:meth:`cut`
        without the line breaks, in the form the cache keeps them)."""
        return [self._cut_line(line) for line in text.split("\n")]

    def fingerprint(self, text: str, title: str | None = None) -> Fingerprint:
        """The fingerprint of ``text``, with its headline ``title`` when given (:mod:`.titles`)."""
        found = self._fingerprint(text)
        found.declared = declared_hash(text)
        return found.with_title(title)

    def _fingerprint(self, text: str) -> Fingerprint:
        codes = strip_notices(fold_codes(text, self.compiled), self.compiled)
        if self.compiled:
            return self._fingerprint_compiled(codes)
        sentences = sentences_of(codes)
        longest = np.argsort(-sentences.lengths, kind="stable")  # sentence numbers, longest first
        simhash_text = self._simhash_text(codes, sentences, longest)
        simhash_value, tokens = self.features.simhash(self.cut(simhash_text), False)
        recipe = self.recipe
        sketch, sketch_keys = sketch_and_keys(
            sentences.content, recipe.sketch_size, recipe.shingle_width, self.sketch_keys
        )
        return Fingerprint(
            sentence_keys=self._sentence_keys(sentences, longest),
            simhash=simhash_value,
            sketch=sketch,
            chars=len(sentences.content),
            tokens=tokens,
            sketch_keys=sketch_keys_of(sketch_keys),
            story_words=story_words_of(sentences.content, compiled=False),
            digest=content_digest(sentences.content),
        )

    def _fingerprint_compiled(self, codes: np.ndarray) -> Fingerprint:
        """The same fingerprint as the numpy path below, from the C kernel's loops."""
        recipe = self.recipe
        tables = text_tables()
        simhash_text, keys, sketch, distinct, chars, sketch_keys, places, content = kernel.parts(
            codes,
            tables.ends,
            tables.content,
            MIN_SENTENCE_CHARS,
            recipe.simhash_sentences,
            2 * recipe.nshash_n,
            recipe.sketch_size,
            recipe.shingle_width,
            self.sketch_keys,
        )
        simhash_value, tokens = self.features.simhash_of_lines(self.cut_lines(simhash_text))
        content_codes = np.frombuffer(content, dtype=np.uint32)
        return Fingerprint(
            sentence_keys=keys,
            simhash=simhash_value,
            sketch=Sketch.from_bytes(sketch, distinct, places),
            chars=chars,
            tokens=tokens,
            sketch_keys=sketch_keys_of(sketch_keys),
            story_words=story_words_later(content_codes),
            digest=content_digest(content_codes),
        )

    def _simhash_text(self, codes: np.ndarray, sentences: Sentences, longest: np.ndarray) -> str:
        """The text the SimHash is computed on: the longest sentences, in their order.

        Banners, source and editor lines and promotions are short, and cuts take the end; the
        longest sentences carry the story. The fewer of them, the more reprints fall within
        distance k (figures in benchmarks/README.md). Three keep the SimHash a summary of the
        story rather than of one sentence (nshash's part), and tokenising few sentences keeps
        a fingerprint cheap.
        """
        limit = self.recipe.simhash_sentences
        if not limit or len(sentences) <= limit:
            return to_text(codes)
        top = np.sort(longest[:limit])
        content = to_text(sentences.content)
        starts, lengths = sentences.starts[top].tolist(), sentences.lengths[top].tolist()
        return "\n".join(content[start : start + length] for start, length in zip(starts, lengths))

    def _sentence_keys(self, sentences: Sentences, longest: np.ndarray) -> list[int]:
        """Hashes of the longest sentences, longest first; twice n of them, because the
        store skips sentences that turn out to be boilerplate and takes the next."""
        content = content_bytes(sentences.content)
        starts, lengths = sentences.starts.tolist(), sentences.lengths.tolist()
        keys: list[int] = []
        for index in longest.tolist():
            key = span_key(content, starts[index], starts[index] + lengths[index])
            if key not in keys:
                keys.append(key)
                if len(keys) == 2 * self.recipe.nshash_n:
                    break
        return keys
