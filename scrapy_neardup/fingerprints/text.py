"""Text normalisation, sentence splitting and tokenising.

Reprint sites change exactly what normalisation removes (full/half width, invisible
characters, white space, Latin case, and script: Hong Kong and Taiwan sites reprint mainland
stories in Traditional characters, mainland sites theirs in Simplified), so every fingerprint
is computed on normalised text, Traditional and regional variant characters folded to
Simplified.

Normalisation works on an array of code points: a table built once maps each character of
the Basic Multilingual Plane to its NFKC, lower-cased form, so a page costs a few numpy
operations instead of ``unicodedata.normalize``, which is much slower on Chinese text; the
table is cached (:mod:`.tables`), as building it from ``unicodedata`` is slow. Text
with characters the table cannot map alone (combining marks, ligatures such as "ﬁ",
characters beyond the BMP that NFKC changes) takes the exact ``unicodedata`` path.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import xxhash

from .kernel import kernel
from .tables import cached_arrays, code_signature, file_signature, package_version

MIN_SENTENCE_CHARS = 8  # shorter sentences ("图片来源：网络") carry no signal

_DROP = 0xFFFFFFFF  # table value of invisible characters: removed
_SLOW = 0xFFFFFFFE  # table value of characters that need exact NFKC
SENTENCE_ENDS = "。！？!?;；…\n"  # after folding; a line break ends a sentence too


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
        if (mapped.isspace() and len(mapped) <= 1) or mapped == "":
            fold[code] = ord(" ") if mapped else _DROP
        elif len(mapped) == 1:
            fold[code] = ord(mapped)
        elif not any(c.isalnum() for c in mapped):
            # "…" -> "...": punctuation only; keep sentence ends, else one mark is enough
            fold[code] = code if char in SENTENCE_ENDS else ord(mapped[0])
        else:
            fold[code] = _SLOW  # "ﬁ" -> "fi", "㈠" -> "(一)"
    for code in range(size):
        target = int(fold[code])
        if target < _SLOW:
            content[code] = unicodedata.category(chr(target))[0] in "LN"
    simplified = _simplified_forms()
    for code in range(size):
        target = int(fold[code])
        if target < _SLOW and target in simplified:
            fold[code] = simplified[target]
    ends = np.zeros(size, dtype=bool)
    ends[[ord(c) for c in SENTENCE_ENDS]] = True
    return {"fold": fold, "content": content, "ends": ends}


# OpenCC configurations whose single-character conversions fold scripts, in order of trust:
# Traditional to Simplified, then the Hong Kong and Taiwan variant forms it leaves alone.
_SCRIPT_CONFIGS = ("t2s", "hk2s", "tw2s")
# Configurations whose phrase choices are read off the dictionary's words (no vocabulary
# changes: s2twp's 软件 -> 軟體 would merge unrelated characters).
_PHRASE_CONFIGS = ("s2t", "s2tw")
_PHRASE_WORDS = 100_000  # the dictionary's most frequent words of two or more characters
_CJK_RANGES = ((0x3400, 0x4DC0), (0x4E00, 0xA000), (0xF900, 0xFB00))


def _simplified_forms() -> dict[int, int]:
    """Code point of each Traditional or regional variant character -> its Simplified form.

    A per-character fold costs nothing on top of the fold table, and it is consistent where
    a converter's choice depends on the phrase: s2t writes 了解 as 瞭解 but 了 alone as 了,
    so 了 and 瞭 must fold alike. Such pairs are read off the conversions of jieba's
    dictionary words and merged into one class, folded to its most frequent member. A
    Simplified original and its Traditional copy (s2t, s2hk, s2tw) then fold to the same
    characters. Regional vocabulary (软件 / 軟體) is left as it is: a few words in a story.
    """
    try:
        import opencc
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ImportError(f"scrapy-neardup needs OpenCC to fold scripts ({exc}): pip install opencc") from exc
    forms = _character_forms(opencc)
    _merge_phrase_choices(opencc, forms)
    return forms


def _character_forms(opencc: Any) -> dict[int, int]:
    """Each character's own conversion. A variant mapping never applies to a character that
    is itself some Traditional character's Simplified form (tw2s would turn 么 into 幺)."""
    chars = [chr(code) for lo, hi in _CJK_RANGES for code in range(lo, hi)]
    forms: dict[int, int] = {}
    simplified: set[int] = set()
    for number, config in enumerate(_SCRIPT_CONFIGS):
        # One call per configuration; line breaks keep every character a phrase of its own.
        converted = opencc.OpenCC(config).convert("\n".join(chars)).split("\n")
        if len(converted) != len(chars):
            raise RuntimeError(f"OpenCC {config} did not convert character by character")
        for char, out in zip(chars, converted):
            if len(out) != 1 or out == char or ord(char) in forms:
                continue
            if number == 0 or ord(char) not in simplified:
                forms[ord(char)] = ord(out)
        if number == 0:  # compatibility ideographs are folded by NFKC before this table
            simplified = {form for code, form in forms.items() if not 0xF900 <= code < 0xFB00}
    for code in forms:  # to a fixed point: a form that folds again folds all the way
        for _ in range(len(_SCRIPT_CONFIGS)):
            forms[code] = forms.get(forms[code], forms[code])
    return forms


def _merge_phrase_choices(opencc: Any, forms: dict[int, int]) -> None:
    """Fold together the characters that a conversion of a word (or its conversion back
    with t2s) puts in place of each other, each class to its most frequent member."""
    words, frequency = _dictionary_words()
    table = dict(forms.items())
    parent: dict[int, int] = {}

    def root(code: int) -> int:
        while parent.get(code, code) != code:
            code = parent[code]
        return code

    back = opencc.OpenCC("t2s")
    source = "\n".join(words)
    for config in _PHRASE_CONFIGS:
        converted = opencc.OpenCC(config).convert(source)
        for before, after in ((source, converted), (converted, back.convert(converted))):
            lines = zip(before.translate(table).split("\n"), after.translate(table).split("\n"))
            for one, other in lines:
                if one == other or len(one) != len(other):
                    continue
                for a, b in zip(map(ord, one), map(ord, other)):
                    if a != b and a <= 0xFFFF and b <= 0xFFFF:
                        parent[root(a)] = root(b)
    classes: dict[int, list[int]] = {}
    for code in list(parent):
        classes.setdefault(root(code), []).append(code)
    merged: dict[int, int] = {}
    for members in classes.values():
        members = sorted(set(members) | {root(members[0])})
        head = max(members, key=lambda code: (frequency.get(code, 0), -code))
        merged.update((code, head) for code in members if code != head)
    for code, form in list(forms.items()):
        forms[code] = merged.get(form, form)
    for code, head in merged.items():
        forms[code] = head


def _dictionary_words() -> tuple[list[str], dict[int, int]]:
    """jieba's most frequent words of two or more characters, and each character's
    frequency over the whole dictionary (found without importing jieba)."""
    path = os.path.join(package_dir("jieba"), "dict.txt")
    entries: list[tuple[int, str]] = []
    frequency: dict[int, int] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            word, count, *_ = line.split(" ")
            weight = int(count)
            for char in word:
                frequency[ord(char)] = frequency.get(ord(char), 0) + weight
            if len(word) > 1:
                entries.append((weight, word))
    entries.sort(key=lambda entry: (-entry[0], entry[1]))
    return [word for _, word in entries[:_PHRASE_WORDS]], frequency


_TABLES: _Tables | None = None


def package_dir(name: str) -> str:
    """The folder of the installed package ``name``, found without importing it; \"\" when absent."""
    spec = importlib.util.find_spec(name)
    locations = spec.submodule_search_locations if spec else None
    return next(iter(locations)) if locations else ""


def idf_path() -> str:
    """jieba's IDF file (word weights), found without importing jieba."""
    folder = package_dir("jieba")
    if not folder:
        raise ImportError("jieba is not installed: pip install jieba")
    return os.path.join(folder, "analyse", "idf.txt")


@functools.lru_cache(maxsize=1)
def text_tables_key() -> dict:
    """Everything the text tables are built from (the word-weight table depends on it too)."""
    return {
        "unicode": unicodedata.unidata_version,
        "opencc": package_version(package_dir("opencc"), "opencc"),
        "script_configs": [_SCRIPT_CONFIGS, _PHRASE_CONFIGS, _PHRASE_WORDS],
        "jieba_dictionary": file_signature(os.path.join(package_dir("jieba"), "dict.txt")),
        "sentence_ends": SENTENCE_ENDS,
        "code": code_signature(__file__),
    }


def text_tables() -> _Tables:
    """The per-code-point tables (fold, content, sentence ends), read from the cache or built
    from ``unicodedata`` and OpenCC on first use."""
    global _TABLES
    if _TABLES is None:
        _TABLES = _Tables(**cached_arrays("text-tables", text_tables_key(), _build_tables))
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
        expanded = _expanded(codes, folded)
        return _exact(text) if expanded is None else expanded
    return folded[folded != _DROP]


def _expanded(codes: np.ndarray, folded: np.ndarray) -> np.ndarray | None:
    """What :func:`_exact` makes of the text of ``codes`` (``folded`` by the table), from the
    table's fold but for the characters NFKC writes as several ("℃" -> "°c", "Ⅱ" -> "ii", "…"
    -> "..."), written out as :func:`_exact` does; None when a combining mark is among them,
    which may compose with a neighbour: then only NFKC of the whole text is exact. NFKC of a
    whole text costs far more than the table's fold, for one "℃" in a weather report."""
    expansions, expanded = _expansions()
    places = np.flatnonzero((folded == _SLOW) | expanded[np.where(codes > 0xFFFF, 0, codes)])
    if len(places) > MAX_SPLICED:
        return None
    pieces, start = [], 0
    for at in places.tolist():
        expansion = expansions.get(int(codes[at]))
        if expansion is None:
            return None
        pieces += [folded[start:at], expansion]
        start = at + 1
    pieces.append(folded[start:])
    joined = np.concatenate(pieces)
    return joined[joined != _DROP]


# Past this many characters to write out, NFKC of the whole text costs less than splicing each.
MAX_SPLICED = 256
_EXPANSIONS: tuple[dict[int, np.ndarray], np.ndarray] | None = None


def _expansions() -> tuple[dict[int, np.ndarray], np.ndarray]:
    """The characters NFKC writes as several that fold alone whatever stands beside them,
    each as :func:`_exact` folds it (neither it nor what it becomes holds a mark or a Hangul
    letter or syllable, the characters that compose with a neighbour); and which of the
    characters the table folds alone :func:`_exact` folds otherwise ("…", kept by the table
    as a sentence end, is "..." there)."""
    global _EXPANSIONS
    if _EXPANSIONS is None:
        fold = text_tables().fold
        expanded = np.zeros(0x10000, dtype=bool)
        found = {}
        for code in range(0x10000):
            slow, target = fold[code] == _SLOW, int(fold[code])
            if not slow and (target == _DROP or len(unicodedata.normalize("NFKC", chr(code))) == 1):
                continue
            folded = _exact(chr(code))
            if not slow and folded.tolist() == [target]:
                continue
            expanded[code] = not slow
            if not any(_may_compose(int(part)) for part in [code, *folded.tolist()]):
                found[code] = folded
        _EXPANSIONS = found, expanded
    return _EXPANSIONS


def _may_compose(code: int) -> bool:
    return unicodedata.category(chr(code)).startswith("M") or 0x1100 <= code < 0x1200 or 0xAC00 <= code < 0xD7A4


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
    if not codes.size or codes.max() <= 0xFFFF:  # nearly every text: the table alone
        return tables.content[codes]
    small = np.where(codes > 0xFFFF, 0, codes)
    mask = tables.content[small]
    return np.where(codes > 0xFFFF, (codes >= 0x20000) & (codes < 0x40000), mask)


def to_text(codes: np.ndarray) -> str:
    return codes.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")


def fold_with_positions(text: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The folded code points fingerprints are made of and, when folding went character by
    character (it does for nearly all text), the position in ``text`` of each; else None (the
    caller shows the folded text, or folds character by character to place marks)."""
    codes = _codes(text)
    if not (codes > 0xFFFF).any():
        folded = text_tables().fold[codes]
        if not (folded == _SLOW).any():
            kept = np.flatnonzero(folded != _DROP)
            return folded[kept], kept
    return fold_codes(text), None


def fold_each_with_positions(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Each character of ``text`` folded alone, and the position in ``text`` of every folded
    code point: where whole-text folding joins characters, marks still find their place. The
    table folds nearly every character; only the few it cannot fold alone (an ellipsis that
    NFKC expands, a character beyond the BMP) take the exact path, one by one."""
    codes = _codes(text)
    wide = codes > 0xFFFF
    folded = text_tables().fold[np.where(wide, 0, codes)]
    alone = np.flatnonzero((folded == _SLOW) | wide).tolist()
    pieces, places, start = [], [], 0
    for index in [*alone, len(codes)]:
        kept = start + np.flatnonzero(folded[start:index] != _DROP)
        pieces.append(folded[kept])
        places.append(kept)
        if index < len(codes):
            one = fold_codes(text[index])
            pieces.append(one)
            places.append(np.full(len(one), index, dtype=np.int64))
        start = index + 1
    return np.concatenate(pieces).astype(np.uint32), np.concatenate(places).astype(np.int64)


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


def content_bytes(codes: np.ndarray) -> bytes:
    """Folded content characters as the bytes that keys hash (UTF-32, little-endian)."""
    return codes.astype("<u4").tobytes()


def span_key(content: bytes, start: int, end: int) -> int:
    """The key of content characters ``[start, end)`` of ``content`` (:func:`content_bytes`).

    nshash sentence keys, related-story passages and ``explain`` all hash a span this way, so
    a passage that is a whole sentence has that sentence's key.
    """
    return xxhash.xxh64_intdigest(content[4 * start : 4 * end])


def sentences_of(codes: np.ndarray, min_chars: int = MIN_SENTENCE_CHARS) -> Sentences:
    """Split folded code points at 。！？；!?; … "." and line breaks."""
    ends, mask = sentence_ends(codes)
    # Sentence number of every character: the count of sentence ends before it.
    number = np.cumsum(ends) - ends
    content = codes[mask]
    lengths = np.bincount(number[mask], minlength=int(number[-1]) + 1 if len(number) else 0)
    starts = np.cumsum(lengths) - lengths
    keep = lengths >= min_chars
    return Sentences(content, starts[keep], lengths[keep])


def sentence_ends(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each folded code point: does it end a sentence, is it a content character."""
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
    return ends, mask


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


def loaded_tokenizer(name: str) -> Tokenizer | None:
    """The tokenizer called ``name`` when this process has loaded it already, else None."""
    return _CACHE.get(name)


def _tokenizer_name(name: str | None) -> str:
    """``name``, or the fastest installed for ``auto`` or None; an unknown name is refused."""
    if name in (None, "", "auto"):
        return default_tokenizer_name()
    if name not in _TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {sorted(_TOKENIZERS)} or 'auto'")
    return name


def _not_installed(name: str, why: object) -> ValueError:
    return ValueError(f"tokenizer {name!r} is not installed ({why}); pip install scrapy-neardup[fast]")


def check_tokenizer(name: str | None = None) -> None:
    """Raise the ValueError ``get_tokenizer`` would for a tokenizer that is unknown or not
    installed, without loading it: a process that fingerprints nothing itself (a crawl whose
    workers do) need not pay for the dictionary."""
    name = _tokenizer_name(name)
    if not package_dir(name):
        raise _not_installed(name, f"No module named {name!r}")


def get_tokenizer(name: str | None = None) -> Tokenizer:
    """Return the shared tokenizer called ``name`` (``auto`` or None: the fastest installed)."""
    name = _tokenizer_name(name)
    if name not in _CACHE:
        try:
            _CACHE[name] = _TOKENIZERS[name]()
        except ImportError as exc:
            raise _not_installed(name, exc) from exc
    return _CACHE[name]
