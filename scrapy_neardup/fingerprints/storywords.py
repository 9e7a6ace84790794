"""What a text is about: the words it keeps coming back to, where they occur, and its figures.

Two texts can share a passage and still be other stories: a commentary quotes a whole story
amid its own text, a roundup carries several, and template reports share the template while
the facts differ. The sketch tells how much is shared; these tell whether what is not shared
is the same story.

- Story words: the words a story repeats (its people, places, things) are what an article's
  later paragraphs share with its lead; a roundup's other stories, or a commentary's own text,
  repeat words of their own. Chinese is not cut into words here (a tokenizer over the whole
  text would cost more than the rest of a fingerprint): a story word is a pair of consecutive
  Chinese characters, neither a function character, seen twice or more. Each is weighed by
  how rare it is in the language (the lowest IDF of a jieba dictionary word that holds it; a
  pair no word holds, a name for instance, gets :data:`UNKNOWN_IDF`) times (1 + ln count);
  the :data:`WORDS` heaviest are kept with the parts of the text they occur in.
- Figures: the numbers a text gives (runs of digits among its content characters), hashed; the
  :data:`FIGURES` smallest hashes are kept, a sample both texts of a pair draw alike. A
  template report of another day shares the template, not its figures; a reprint keeps them.

Places are content-character offsets scaled to 0-255 (:func:`place_of`); a story word's
occurrences are kept as a bit per sixteenth of the text.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import xxhash

from .kernel import kernel
from .notices import merged_spans
from .tables import cached_arrays, code_signature, file_signature, package_version
from .text import fold_codes, idf_path, text_tables_key, to_text

# (1 + ln count) by count, counts past the table sharing its last: the same factors in C and numpy.
TF_FACTORS = np.array([0.0] + [1.0 + math.log(count) for count in range(1, 64)])

WORDS = 24  # story words kept
FIGURES = 16  # figure hashes kept (the smallest)
UNKNOWN_IDF = 10.0  # a character pair that no dictionary word holds: a name, a place, a term
WEIGHT_SCALE = 16.0  # a stored word's IDF, times this, fits a byte
BINS = 16  # a text is cut into this many equal parts of content to say where a word occurs

# How _pair_slots lays the pair table out, as the kernel's story_words probes it. A kernel built
# from an older source (an editable install not built again) probes another layout and would
# find no pair, every word weighed as unknown: the story words are then numpy's.
PAIR_SLOTS_LAYOUT = 2
KERNEL_READS_PAIR_SLOTS = kernel is not None and getattr(kernel, "PAIR_SLOTS_LAYOUT", 1) == PAIR_SLOTS_LAYOUT
# A kernel built from an older source has no figures entry: figures counted alone are then numpy's.
KERNEL_COUNTS_FIGURES = kernel is not None and hasattr(kernel, "figures")

# Characters that make a pair a piece of grammar, not of a story ("的一", "是一", "到了").
FUNCTION_CHARACTERS = "的了是在和与及或也都就而又并对把被让给从向到为以于之其这那个们着过地得一不有没将已等说要会能可所此该每各还再很最更我你他她它"


@dataclass(frozen=True)
class StoryWords:
    """A text's story words (pair code ``first << 16 | second``, IDF byte, first and last
    place) heaviest first, and its figure hashes (sorted)."""

    words: np.ndarray  # uint32
    idf: np.ndarray  # uint8: IDF * WEIGHT_SCALE
    spread: np.ndarray  # uint16: bit i set when the word occurs in the i-th of BINS parts of the text
    figures: np.ndarray  # uint32, sorted, at most FIGURES
    datelines: int = 0  # bit i set when a news dateline starts a story in the i-th of BINS parts

    @classmethod
    def empty(cls) -> StoryWords:
        return cls(
            np.zeros(0, dtype=np.uint32),
            np.zeros(0, dtype=np.uint8),
            np.zeros(0, dtype=np.uint16),
            np.zeros(0, dtype=np.uint32),
        )

    def weights(self) -> np.ndarray:
        return self.idf.astype(np.float64) / WEIGHT_SCALE


def place_of(offsets: np.ndarray, length: int) -> np.ndarray:
    """Content-character offsets as places 0-255: ``offset * 256 // length``."""
    return (np.asarray(offsets, dtype=np.int64) * 256 // max(1, length)).astype(np.uint8)


def _is_han(codes: np.ndarray) -> np.ndarray:
    return ((codes >= 0x4E00) & (codes <= 0x9FFF)) | ((codes >= 0x3400) & (codes <= 0x4DBF))


class _PairTable:
    """IDF of every pair of Chinese characters found in a dictionary word: sorted codes for
    numpy, open addressing for the C kernel (:func:`_pair_slots`)."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.pairs = np.ascontiguousarray(arrays["pairs"], dtype=np.uint32)
        self.idf = np.ascontiguousarray(arrays["idf"], dtype=np.float32)
        self.slots = arrays["slots"]
        self.slot_bytes = self.slots.view(np.uint8)  # for the kernel (see fingerprint._Features)
        self.function = np.zeros(0x10000, dtype=bool)
        self.function[[ord(c) for c in FUNCTION_CHARACTERS]] = True

    def lookup(self, pairs: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(self.pairs, pairs), max(0, len(self.pairs) - 1))
        found = self.pairs[at] == pairs if len(self.pairs) else np.zeros(len(pairs), dtype=bool)
        return np.where(found, self.idf[at] if len(self.pairs) else 0.0, UNKNOWN_IDF)


def _build_pairs() -> dict[str, np.ndarray]:
    """Each pair of Chinese characters inside a word of jieba's IDF file, with the lowest IDF
    of such a word (a pair inside a common word is common), words folded like texts."""
    words: list[str] = []
    values: list[float] = []
    with open(idf_path(), encoding="utf-8") as handle:
        for line in handle:
            word, _, number = line.rstrip("\n").partition(" ")
            if number and len(word) >= 2:
                words.append(word)
                values.append(float(number))
    folded = to_text(fold_codes("\n".join(words))).split("\n")
    if len(folded) == len(words):
        words = folded
    lowest: dict[int, float] = {}
    for word, value in zip(words, values):
        codes = [ord(c) for c in word]
        for a, b in itertools.pairwise(codes):
            if (0x4E00 <= a <= 0x9FFF or 0x3400 <= a <= 0x4DBF) and (0x4E00 <= b <= 0x9FFF or 0x3400 <= b <= 0x4DBF):
                pair = a << 16 | b
                if value < lowest.get(pair, math.inf):
                    lowest[pair] = value
    pairs = np.array(sorted(lowest), dtype=np.uint32)
    idf = np.array([lowest[p] for p in pairs.tolist()], dtype=np.float32)
    return {"pairs": pairs, "idf": idf, "slots": _pair_slots(pairs, idf)}


_SLOT = np.dtype([("pair", "<u4"), ("idf", "<f4")])


def _pair_slots(pairs: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """The pairs by open addressing (linear probing from the top bits of the 32-bit product
    ``pair * 0x9E3779B1``), for the C kernel: one cache miss per lookup instead of a binary
    search's many. The top bits depend on every bit of the pair; the low bits only on the low
    bits of both characters, which a language's pairs share by the thousand (runs of taken slots
    20 long on average instead of 1). A pair code is never 0, so 0 marks an empty slot."""
    size = 1 << max(4, (2 * len(pairs) - 1).bit_length())
    slots = np.zeros(size, dtype=_SLOT)
    taken = slots["pair"]
    mask = size - 1
    for pair, value in zip(pairs.tolist(), idf.tolist()):
        slot = ((pair * 0x9E3779B1) & 0xFFFFFFFF) * size >> 32
        while taken[slot]:
            slot = (slot + 1) & mask
        slots[slot] = (pair, value)
    return slots


_TABLE: _PairTable | None = None


def pair_table() -> _PairTable:
    """The shared pair table, read from the cache or built on first use."""
    global _TABLE
    if _TABLE is None:
        path = idf_path()
        key = {
            "idf": file_signature(path),
            "jieba": package_version(os.path.dirname(os.path.dirname(path)), "jieba"),
            "text_tables": text_tables_key(),
            "code": code_signature(__file__),
        }
        _TABLE = _PairTable(cached_arrays("story-pairs", key, _build_pairs))
    return _TABLE


def story_words_of(content: np.ndarray, compiled: bool = True, dated: bool = True) -> StoryWords:
    """The story words and figures of the content characters ``content`` (notices left out,
    as the fingerprint has them); the C kernel's loops when built, else numpy's. Without
    ``dated``, the datelines are left 0 (not looked for)."""
    table = pair_table()
    if compiled and KERNEL_READS_PAIR_SLOTS:
        words, idf, spread, figures = kernel.story_words(
            np.ascontiguousarray(content, dtype=np.uint32),
            table.slot_bytes,
            table.function,
            TF_FACTORS,
            WORDS,
            BINS,
            FIGURES,
        )
        return StoryWords(
            np.frombuffer(words, dtype=np.uint32),
            np.frombuffer(idf, dtype=np.uint8),
            np.frombuffer(spread, dtype=np.uint16),
            np.frombuffer(figures, dtype=np.uint32),
            datelines_of(content) if dated else 0,
        )
    length = len(content)
    content = content.astype(np.uint32)
    first_chars, second_chars = content[:-1], content[1:]
    usable = _is_han(first_chars) & _is_han(second_chars)
    usable &= ~table.function[np.minimum(first_chars, 0xFFFF)] & ~table.function[np.minimum(second_chars, 0xFFFF)]
    at = np.flatnonzero(usable)
    pairs = (first_chars[at] << 16) | second_chars[at]
    distinct, counts = np.unique(pairs, return_counts=True)
    repeated = counts >= 2
    distinct, counts = distinct[repeated], counts[repeated]
    idf = table.lookup(distinct)
    score = idf * TF_FACTORS[np.minimum(counts, len(TF_FACTORS) - 1)]
    order = np.lexsort((distinct, -score))[:WORDS]  # heaviest first, ties by code
    chosen = distinct[order]
    # Where each chosen word occurs: a bit for each part of the text it occurs in.
    ranked = np.argsort(chosen)
    found = np.searchsorted(chosen, pairs, sorter=ranked)
    found = np.minimum(found, max(0, len(chosen) - 1))
    hits = (chosen[ranked[found]] == pairs) if len(chosen) else np.zeros(len(pairs), dtype=bool)
    spread = np.zeros(len(chosen), dtype=np.uint16)
    bins = (at[hits].astype(np.int64) * BINS // max(1, length)).astype(np.uint16)
    np.bitwise_or.at(spread, ranked[found[hits]], np.left_shift(np.uint16(1), bins).astype(np.uint16))
    return StoryWords(
        words=chosen.astype(np.uint32),
        idf=np.minimum(np.floor(idf[order] * WEIGHT_SCALE + 0.5), 255).astype(np.uint8),
        spread=spread,
        figures=figures_of(content),
        datelines=datelines_of(content, compiled=False) if dated else 0,
    )


class _Deferred(StoryWords):
    """Story words made when first read: the words by ``make``, the datelines apart by ``date``
    (or given), and the figures alone by ``count`` until the words are made. The one-story rule
    reads the figures of a text judged against another, its words only where they decide (a
    reprint holding the other whole needs none), and the datelines only of a text holding a
    much smaller one."""

    __slots__ = ("_count", "_date", "_datelines", "_figures", "_found", "_make")
    _found: StoryWords | None
    _datelines: int | None
    _figures: np.ndarray | None
    _make: Callable[[], StoryWords] | None  # until the words are made
    _date: Callable[[], int] | None  # until the datelines are made
    _count: Callable[[], np.ndarray] | None  # the figures alone; None: read them with the words

    def __init__(
        self,
        make: Callable[[], StoryWords],
        date: Callable[[], int] | int,
        count: Callable[[], np.ndarray] | None = None,
    ) -> None:
        dated = isinstance(date, int)
        object.__setattr__(self, "_found", None)
        object.__setattr__(self, "_make", make)
        object.__setattr__(self, "_datelines", date if dated else None)
        object.__setattr__(self, "_date", None if dated else date)
        object.__setattr__(self, "_figures", None)
        object.__setattr__(self, "_count", count)

    def _made(self) -> StoryWords:
        found = self._found
        if found is None:
            make = self._make  # None: another thread made them since
            found = make() if make is not None else self._found
            assert found is not None
            object.__setattr__(self, "_found", found)
            object.__setattr__(self, "_make", None)
            object.__setattr__(self, "_count", None)
        return found

    def _dated(self) -> int:
        datelines = self._datelines
        if datelines is None:
            date = self._date  # None: another thread made them since
            datelines = date() if date is not None else self._datelines
            assert datelines is not None
            object.__setattr__(self, "_datelines", datelines)
            object.__setattr__(self, "_date", None)
        return datelines

    def _counted(self) -> np.ndarray:
        found, figures = self._found, self._figures
        if found is not None:
            return found.figures
        if figures is None:
            count = self._count
            if count is None:  # read with the words (a stored record's), or counted since by another thread
                return self._made().figures
            figures = count()
            object.__setattr__(self, "_figures", figures)
            object.__setattr__(self, "_count", None)
        return figures

    # Properties, not attributes looked up when missing: the class's default for datelines
    # would answer first.
    words = property(lambda self: self._made().words)
    idf = property(lambda self: self._made().idf)
    spread = property(lambda self: self._made().spread)
    figures = property(lambda self: self._counted())
    datelines = property(lambda self: self._dated())

    def __reduce__(self) -> tuple[type[StoryWords], tuple[Any, ...]]:
        # Pickled (a crawl worker's fingerprint) and copied as the story words themselves.
        found = self._made()
        return (StoryWords, (found.words, found.idf, found.spread, found.figures, self._dated()))


def story_words_later(content: np.ndarray, compiled: bool = True) -> StoryWords:
    """:func:`story_words_of`, computed when first read, the figures alone when read first.
    Only a candidate close enough to be judged by the one-story rule reads them
    (engine.samestory), most of a reprint only its figures, and a stored record all: most
    queries never do."""
    return _Deferred(
        lambda: story_words_of(content, compiled, dated=False),
        lambda: datelines_of(content, compiled),
        lambda: figures_only(content, compiled),
    )


def story_words_read_later(read: Callable[[], StoryWords], datelines: int) -> StoryWords:
    """Story words a stored record holds, read from its bytes by ``read`` when first read:
    most records read as candidates are never judged by the one-story rule."""
    return _Deferred(read, datelines)


def figures_only(content: np.ndarray, compiled: bool = True) -> np.ndarray:
    """The figures of :func:`story_words_of` without its words: the C kernel's when built."""
    if compiled and KERNEL_COUNTS_FIGURES:
        return np.frombuffer(kernel.figures(np.ascontiguousarray(content, dtype=np.uint32), FIGURES), dtype=np.uint32)
    return figures_of(content)


UNDATED_PLACE = 8  # characters of the place in a dateline without a day ("本报加拉加斯电")
# A news dateline as the content characters keep it (punctuation and spaces gone): an agency or
# paper, a place, a day, 电 ("新华社北京1月12日电", "本报珀斯１月１１日电"), 本报讯, or the paper and
# a place without a day ("本报加拉加斯电": a name, no function character, no 记者, as in
# "本报记者从电力部获悉"). Each starts a story; an article has one at most, a roundup of agency
# stories one for each.
DATELINE = re.compile(
    r"(?:新华社|中新社|本报)[\u4e00-\u9fff]{0,10}?(?:[0-9]{1,2}|[一二三四五六七八九十]{1,3})月"
    r"(?:[0-9]{1,2}|[一二三四五六七八九十]{1,3})日电|本报讯"
    rf"|本报(?:(?!记者)[^\W\d_{FUNCTION_CHARACTERS}电讯]){{2,{UNDATED_PLACE}}}电"
)


# A dateline starts a story when a story follows it; one near the end of a text closes it
# ("……（新华社北京1月6日电）"), as many papers print it.
STORY_AFTER_DATELINE = 60


def datelines_of(content: np.ndarray, compiled: bool = True) -> int:
    """The parts (a bit each, of BINS) of ``content`` in which a news dateline starts."""
    if compiled and kernel is not None:
        marks = kernel.dateline_marks(np.ascontiguousarray(content, dtype=np.uint32))
        if not any(marks):  # most texts: nothing to decode and scan
            return 0
        text = np.asarray(content, dtype="<u4").tobytes().decode("utf-32-le", "replace")
    else:
        data = np.asarray(content, dtype="<u4").tobytes()
        if not any(mark in data for mark in _DATELINE_MARKS):
            return 0
        text = data.decode("utf-32-le", "replace")
        marks = _dateline_marks(text)
    found = 0
    for start, end in _dateline_windows(len(text), *marks):
        for match in DATELINE.finditer(text, start, end):
            if len(text) - match.end() >= STORY_AFTER_DATELINE:  # not a closing attribution
                found |= 1 << (match.start() * BINS // max(1, len(text)))
    return found


# Every window below holds one of these (本报讯 holds 本报), as the content's UTF-32 bytes.
_DATELINE_MARKS = tuple(word.encode("utf-32-le") for word in ("日电", "本报"))

# The longest text DATELINE matches: an agency (3), a place (10), a month (3), 月, a day (3), 日电.
DATELINE_LONGEST = 22


def _dateline_marks(text: str) -> tuple[list[int], list[int], list[int]]:
    """Where each 日电 ends, and each 本报讯 and each 本报 starts (``kernel.dateline_marks``)."""
    papers = _places(text, "本报")
    return [at + 2 for at in _places(text, "日电")], [at for at in papers if text[at + 2 : at + 3] == "讯"], papers


def _places(text: str, word: str) -> list[int]:
    found, at = [], text.find(word)
    while at >= 0:
        found.append(at)
        at = text.find(word, at + 1)
    return found


def _dateline_windows(length: int, said: list[int], notices: list[int], papers: list[int]) -> list[tuple[int, int]]:
    """The stretches of a text of ``length`` a dateline can lie in, in order, apart: the
    DATELINE_LONGEST characters ending with each 日电 (``said``: where each ends), each 本报讯,
    and the characters after each 本报 that an undated dateline takes. Every match of DATELINE
    lies in one, so the pattern tried in them finds what it finds tried at every character of
    the text."""
    windows = [(max(0, end - DATELINE_LONGEST), end) for end in said]
    windows += [(start, start + len("本报讯")) for start in notices]
    windows += [(start, min(length, start + len("本报电") + UNDATED_PLACE)) for start in papers]
    return merged_spans(windows)


def figures_of(content: np.ndarray) -> np.ndarray:
    """Hashes of the numbers in ``content`` (runs of digits among the content characters, so
    that a space, a comma or a decimal point written otherwise changes nothing), the FIGURES
    smallest, sorted. Dates (a number before 年, 月 or 日) are left out: a reprinting site dates
    its own banner ("5月18日消息"), so a copy's dates are not all the story's. So are the digits of a
    code (:func:`_in_code`: a web address, a site's or an account's id in a copy's own lines)."""
    content = np.asarray(content, dtype=np.uint32)
    digit = (content >= 48) & (content <= 57)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], digit.astype(np.int8), [0]))))
    data = content.astype("<u4").tobytes()
    hashes = set()
    for start, end in zip(edges[0::2].tolist(), edges[1::2].tolist()):
        if end < len(content) and int(content[end]) in _DATE_UNITS:
            continue
        if _in_code(content, start, end):
            continue
        hashes.add(xxhash.xxh64_intdigest(data[4 * start : 4 * end]) & 0xFFFFFFFF)
    return np.array(sorted(hashes)[:FIGURES], dtype=np.uint32)


_DATE_UNITS = frozenset(map(ord, "年月日"))
_LATIN = frozenset(map(ord, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))


def _in_code(content: np.ndarray, start: int, end: int) -> bool:
    """Whether the digits ``content[start:end]`` belong to a code: after a Latin letter
    ("n2024", "iphone15"), or before letters that more digits follow ("0df12126"). Letters
    after a number with none after them are its unit (9℃ folds to 9°c, 30km)."""
    if start and int(content[start - 1]) in _LATIN:
        return True
    after = end
    while after < len(content) and int(content[after]) in _LATIN:
        after += 1
    return end < after < len(content) and 48 <= int(content[after]) <= 57
