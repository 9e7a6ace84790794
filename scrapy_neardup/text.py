"""Text normalisation, sentence splitting and tokenising.

Reprint sites change exactly what normalisation removes (full/half width, invisible
characters, white space, Latin case), so every fingerprint is computed on normalised text.

Normalisation works on an array of code points: a table built once maps each character of
the Basic Multilingual Plane to its NFKC, lower-cased form, so a page costs a few numpy
operations instead of ``unicodedata.normalize``, which is much slower on Chinese text; the
table is cached (:mod:`.prepared`), as building it from ``unicodedata`` is slow. Text
with characters the table cannot map alone (combining marks, ligatures such as "ﬁ",
characters beyond the BMP that NFKC changes) takes the exact ``unicodedata`` path.
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np
import xxhash

from .prepared import cached_arrays, code_signature

try:  # the C loops of fingerprinting, built by setup.py where a compiler is available
    from . import _kernel as kernel
except ImportError:  # pragma: no cover - installs without a compiler run on numpy alone
    kernel = None

MIN_SENTENCE_CHARS = 8  # shorter sentences ("图片来源：网络") carry no signal

_DROP = 0xFFFFFFFF  # table value of invisible characters: removed
_SLOW = 0xFFFFFFFE  # table value of characters that need exact NFKC
_SENTENCE_ENDS = "。！？!?;；…\n"


class _Tables:
    """Per-code-point lookup tables for the Basic Multilingual Plane."""

    def __init__(self, fold: np.ndarray, content: np.ndarray, ends: np.ndarray) -> None:
        self.fold = fold  # folded code point, or _DROP / _SLOW
        self.content = content  # letters and digits after folding
        self.ends = ends  # sentence ends


def _build_tables() -> dict[str, np.ndarray]:
    size = 0x10000
    fold = np.arange(size, dtype=np.uint32)
    content = np.zeros(size, dtype=bool)
    for code in range(size):
        char = chr(code)
        category = unicodedata.category(char)
        if category in ("Cf", "Cs") or code in (0x00AD, 0x180E):
            # Lone surrogates (decoding debris in binary junk) go too: no encoder takes them.
            fold[code] = _DROP  # zero-width and format characters
            continue
        if category == "Cc":
            fold[code] = ord("\n") if char in "\n\r\v\f\x1c\x1d\x1e\x85" else ord(" ")
            continue
        if category.startswith("M"):
            fold[code] = _SLOW  # may compose with the previous character
            continue
        mapped = unicodedata.normalize("NFKC", char).lower()
        if mapped.isspace() and len(mapped) <= 1 or mapped == "":
            fold[code] = ord(" ") if mapped else _DROP
        elif len(mapped) == 1:
            fold[code] = ord(mapped)
        elif not any(c.isalnum() for c in mapped):
            # "…" -> "...": punctuation only; keep sentence ends, else one mark is enough
            fold[code] = code if char in _SENTENCE_ENDS else ord(mapped[0])
        else:
            fold[code] = _SLOW  # "ﬁ" -> "fi", "㈠" -> "(一)"
    for code in range(size):
        target = int(fold[code])
        if target < _SLOW:
            content[code] = unicodedata.category(chr(target))[0] in "LN"
    ends = np.zeros(size, dtype=bool)
    ends[[ord(c) for c in _SENTENCE_ENDS]] = True
    return {"fold": fold, "content": content, "ends": ends}


_TABLES: _Tables | None = None


def text_tables() -> _Tables:
    """The per-code-point tables (fold, content, sentence ends), read from the cache or built
    from ``unicodedata`` on first use."""
    global _TABLES
    if _TABLES is None:
        key = {
            "unicode": unicodedata.unidata_version,
            "sentence_ends": _SENTENCE_ENDS,
            "code": code_signature(__file__),
        }
        _TABLES = _Tables(**cached_arrays("text-tables", key, _build_tables))
    return _TABLES


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def fold_codes(text: str, compiled: bool = True) -> np.ndarray:
    """Code points of NFKC(text), lower-cased, invisible characters removed, controls as spaces.

    ``compiled=False`` skips the C kernel's loop (tests compare the two).
    """
    tables = text_tables()
    if compiled and kernel is not None:
        folded = kernel.fold(text, tables.fold)
        if folded is not None:  # None: beyond the BMP or not mapped alone; exact path below
            return np.frombuffer(folded, dtype=np.uint32)
    codes = _codes(text)
    wide = codes > 0xFFFF
    if wide.any():
        # Beyond the BMP, NFKC changes only a few blocks (maths letters, enclosed forms).
        wide_text = {chr(c) for c in codes[wide]}
        if any(unicodedata.normalize("NFKC", c) != c for c in wide_text):
            return _exact(text)
        folded = tables.fold[np.where(wide, 0, codes)]
        folded = np.where(wide, codes, folded)
    else:
        folded = tables.fold[codes]
    if (folded == _SLOW).any():
        return _exact(text)
    return folded[folded != _DROP]


def _exact(text: str) -> np.ndarray:
    """The slow, exact path: ``unicodedata`` NFKC, then the table for the rest."""
    tables = text_tables()
    codes = _codes(unicodedata.normalize("NFKC", text).lower())
    small = np.where(codes > 0xFFFF, 0, codes)
    folded = np.where(codes > 0xFFFF, codes, tables.fold[small])
    folded = np.where(folded == _SLOW, codes, folded)  # already NFKC: keep as it is
    return folded[folded != _DROP]


def content_mask(codes: np.ndarray) -> np.ndarray:
    """Letters and digits (CJK included): what survives re-punctuation and re-spacing."""
    tables = text_tables()
    small = np.where(codes > 0xFFFF, 0, codes)
    mask = tables.content[small]
    return np.where(codes > 0xFFFF, (codes >= 0x20000) & (codes < 0x40000), mask)


def to_text(codes: np.ndarray) -> str:
    return codes.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")


_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r" ?\n[\s]*")


def normalize(text: str) -> str:
    """Return ``text`` in the canonical form that all fingerprints are computed on."""
    folded = to_text(fold_codes(text))
    return _BLANK_LINES.sub("\n", _SPACES.sub(" ", folded)).strip()


def content_chars(text: str) -> str:
    """The letters and digits of ``text`` after normalisation."""
    codes = fold_codes(text)
    return to_text(codes[content_mask(codes)])


@dataclass
class Sentences:
    """Sentences of a text as slices of its content characters (no punctuation, no spaces)."""

    content: np.ndarray  # code points of every content character, in order
    starts: np.ndarray  # start of each kept sentence in ``content``
    lengths: np.ndarray  # length of each kept sentence

    def text(self, index: int) -> str:
        start = int(self.starts[index])
        return to_text(self.content[start : start + int(self.lengths[index])])

    def __len__(self) -> int:
        return len(self.lengths)


def sentences_of(codes: np.ndarray, min_chars: int = MIN_SENTENCE_CHARS) -> Sentences:
    """Split folded code points at 。！？；!?; … "." and line breaks."""
    tables = text_tables()
    wide = codes > 0xFFFF
    if wide.any():
        ends = tables.ends[np.where(wide, 0, codes)]
        mask = content_mask(codes)
    else:  # the usual case: one table lookup each
        ends = tables.ends[codes]
        mask = tables.content[codes]
    dot = np.flatnonzero(codes[1:-1] == ord(".")) + 1
    if len(dot):
        # "." ends a sentence ("完成.下一句", "done. Next") except inside a number ("3.5")
        # or a name ("www.example.com").
        before, after = codes[dot - 1], codes[dot + 1]
        inside = (_is_digit(before) & _is_digit(after)) | (_is_latin(before) & _is_latin(after))
        ends[dot[~inside]] = True
    # Sentence number of every character: the count of sentence ends before it.
    number = np.cumsum(ends) - ends
    content = codes[mask]
    lengths = np.bincount(number[mask], minlength=int(number[-1]) + 1 if len(number) else 0)
    starts = np.cumsum(lengths) - lengths
    keep = lengths >= min_chars
    return Sentences(content, starts[keep], lengths[keep])


def _is_digit(codes: np.ndarray) -> np.ndarray:
    return (codes >= ord("0")) & (codes <= ord("9"))


def _is_latin(codes: np.ndarray) -> np.ndarray:
    return (codes >= ord("a")) & (codes <= ord("z"))


def split_sentences(text: str, min_chars: int = MIN_SENTENCE_CHARS) -> list[str]:
    """Sentences of ``text`` reduced to their content characters, short ones left out."""
    found = sentences_of(fold_codes(text), min_chars)
    return [found.text(i) for i in range(len(found))]


class Tokenizer(Protocol):
    """Something that cuts text into words.

    ``name`` is the implementation (jieba, rjieba); ``rules`` names what decides its tokens
    (see :func:`token_rules`), which is what a store's recipe records.
    """

    name: str
    rules: str

    def cut(self, text: str) -> list[str]: ...


# A fixed text whose tokens show a tokenizer's dictionary and rules: dictionary words of
# every length, names only the HMM finds, numbers, dates, Latin words and punctuation.
TOKEN_PROBE = (
    "新华社北京11月23日电 国务院总理今天在人民大会堂会见来访的新西兰总理，双方就经贸合作、"
    "人工智能和气候变化等议题深入交换意见。王晓明表示：“我们要推动高质量发展！”据统计，"
    "2024年全国GDP增长5.2%，第三产业增加值占比达到54.6%。韦小宝和杨过在襄阳城外的小酒馆里"
    "喝酒聊天，说起了郭靖黄蓉当年的往事。iPhone 15 Pro和华为Mate60的销量比拼成为网友热议的话题，"
    "蝴蝶效应、量子纠缠与区块链技术也常被提及。"
)


def token_rules(dictionary: str, cut: Callable[[str], list[str]]) -> str:
    """``dictionary:digest``: the dictionary family and a digest of the probe's tokens.

    Two implementations with one dictionary and one algorithm (jieba and rjieba) give the
    same value, so either may open a store the other wrote; a dictionary or rule change
    that moves a probe token gives another, and the store refuses it.
    """
    return f"{dictionary}:{xxhash.xxh64_hexdigest(chr(31).join(cut(TOKEN_PROBE)).encode('utf-8'))}"


class _FunctionTokenizer:
    def __init__(self, name: str, dictionary: str, cut: Callable[[str], list[str]]):
        self.name = name
        self.cut = cut
        self.rules = token_rules(dictionary, cut)

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name} ({self.rules})>"


def _jieba() -> Tokenizer:
    import jieba

    jieba.setLogLevel(60)  # jieba prints its dictionary loading at INFO to stderr
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    return _FunctionTokenizer("jieba", "jieba-dict", lambda text: tokenizer.lcut(text, HMM=True))


def _rjieba() -> Tokenizer:
    import rjieba

    return _FunctionTokenizer("rjieba", "jieba-dict", lambda text: rjieba.cut(text, hmm=True))


_TOKENIZERS: dict[str, Callable[[], Tokenizer]] = {"jieba": _jieba, "rjieba": _rjieba}
_CACHE: dict[str, Tokenizer] = {}


def fast_tokenizer_available() -> bool:
    """True when rjieba is installed (found without importing it: its import loads a dictionary)."""
    return importlib.util.find_spec("rjieba") is not None


def default_tokenizer_name() -> str:
    """``rjieba`` when installed (same dictionary and algorithm as jieba, much faster)."""
    return "rjieba" if fast_tokenizer_available() else "jieba"


def get_tokenizer(name: str | None = None) -> Tokenizer:
    """Return the shared tokenizer called ``name`` (``auto`` or None: the fastest installed)."""
    if name in (None, "", "auto"):
        name = default_tokenizer_name()
    if name not in _TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {sorted(_TOKENIZERS)} or 'auto'")
    if name not in _CACHE:
        try:
            _CACHE[name] = _TOKENIZERS[name]()
        except ImportError as exc:
            raise ValueError(
                f"tokenizer {name!r} is not installed ({exc}); pip install scrapy-neardup[fast]"
            ) from exc
    return _CACHE[name]
