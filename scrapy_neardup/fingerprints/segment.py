"""jieba's cut (HMM on) in C, token for token jieba-rs's (rjieba's), without a Python string a word.

The C part (``_segment``) takes jieba's dictionary and HMM tables as arrays built here from
jieba's own files and cached: the dictionary with jieba-rs's rule for a word listed twice
(the last frequency, counted once in the total), the HMM's emission log-probabilities
rounded to 6 decimals as jieba-rs's embedded model has them. :class:`RjiebaLines` cuts a
fingerprinter's lines with it once it has given rjieba's tokens on every line so far.
"""

from __future__ import annotations

import ast
import functools
import logging
import os
import threading
from collections.abc import Callable

import numpy as np

from .tables import Arrays, cached_arrays, code_signature, file_signature
from .text import Tokenizer, package_dir

try:
    from . import _segment  # type: ignore[attr-defined]
except ImportError:  # not built: rjieba cuts every line
    _segment = None

logger = logging.getLogger(__name__)

_STATES = "BEMS"  # jieba-rs's state numbers
HMM_FIRST, HMM_LAST = 0x4E00, 0x9FD5  # the characters jieba's HMM cuts


def _jieba_file(*parts: str) -> str:
    folder = package_dir("jieba")
    if not folder:
        raise ImportError("jieba is not installed: pip install jieba")
    return os.path.join(folder, *parts)


def _python_table(path: str) -> dict:
    """The dictionary ``P = {...}`` of one of jieba's finalseg/prob_*.py files, read as data."""
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    return ast.literal_eval(source[source.index("P=") + 2 :])


def _build() -> Arrays:
    frequencies: dict[str, int] = {}
    with open(_jieba_file("dict.txt"), encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if fields:
                frequencies[fields[0]] = int(fields[1]) if len(fields) > 1 else 0
    text = "".join(frequencies)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    ends = np.cumsum([len(word) for word in frequencies], dtype=np.int64)
    start_table = _python_table(_jieba_file("finalseg", "prob_start.py"))
    trans_table = _python_table(_jieba_file("finalseg", "prob_trans.py"))
    emit_table = _python_table(_jieba_file("finalseg", "prob_emit.py"))
    start = np.array([start_table[state] for state in _STATES], dtype=np.float64)
    trans = np.full((4, 4), -3.14e100)
    for first, row in trans_table.items():
        for then, value in row.items():
            trans[_STATES.index(first), _STATES.index(then)] = value
    emit = np.full((HMM_LAST - HMM_FIRST + 1, 4), -3.14e100)
    for state, row in emit_table.items():
        for char, value in row.items():
            if HMM_FIRST <= ord(char) <= HMM_LAST:
                emit[ord(char) - HMM_FIRST, _STATES.index(state)] = float(f"{value:.6f}")
    return {
        "codes": codes,
        "ends": ends,
        "freqs": np.array(list(frequencies.values()), dtype=np.int64),
        "start": start,
        "trans": trans,
        "emit": emit,
    }


@functools.lru_cache(maxsize=1)
def loaded() -> bool:
    """Load the tables into the C part once; False when it is not built."""
    if _segment is None:
        return False
    key = {
        "dictionary": file_signature(_jieba_file("dict.txt")),
        "emit": file_signature(_jieba_file("finalseg", "prob_emit.py")),
        "code": code_signature(__file__),
    }
    arrays = cached_arrays("segment-tables", key, _build)
    names = ("codes", "ends", "freqs", "start", "trans", "emit")
    _segment.load(*(np.ascontiguousarray(arrays[name]).tobytes() for name in names))
    return True


def cut_joined(line: str) -> str:
    """The tokens of ``line`` joined by U+001F, as ``"\\x1f".join(rjieba.cut(line, hmm=True))``."""
    if not loaded():
        raise ImportError("scrapy_neardup.fingerprints._segment is not built")
    return _segment.cut(line)


SEPARATOR = "\x1f"  # between a line's tokens, as the fingerprinter's line cache keeps them
SWITCH_AFTER = 256  # lines rjieba cuts before the C cut may take over

# Lines that each decide a rule of jieba-rs's cut: the route's ties, a dictionary word cut into
# characters, the HMM (and its ties where a character has no emission), runs of letters and
# digits joined by "._-", a percent sign, characters outside jieba's blocks (kana, Hangul,
# extension A, beyond the BMP).
CHECK_LINES = (
    "小明硕士毕业于中国科学院计算所",
    "我们中出了一个叛徒",
    "2023年gdp增长5.2%达到126万亿元",
    "権利者の许诺を得ずに贩売することは",
    "硏究所今回贩売颜呤欠夹鞘褂肧",
    "givewell.org和wes-5.4.5及a_b与a-.b还有a.%b",
    "한국어와ひらがな混在㐀䶵𠀀𪚥豈的句子",
    "x",
    "",
)


class RjiebaLines:
    """A line's tokens joined by :data:`SEPARATOR`, as rjieba cuts them: by rjieba (``cut``)
    for the first :data:`SWITCH_AFTER` lines, then by the C cut, once it has given rjieba's
    tokens on every one of them and on :data:`CHECK_LINES`. A short run (a record or two) so
    never loads the C cut's tables, and an rjieba that cuts otherwise than the C cut (another
    version) keeps its own cut: said once, in a warning."""

    def __init__(self, cut: Callable[[str], list[str]]) -> None:
        self._cut = cut
        self._seen: list[tuple[str, str]] | None = []  # (line, rjieba's tokens joined)
        self._lock = threading.Lock()
        self.by_c = False

    def __call__(self, line: str) -> str:
        if self.by_c:
            return _segment.cut(line)
        joined = SEPARATOR.join(self._cut(line))
        seen = self._seen
        if seen is not None:
            seen.append((line, joined))
            if len(seen) >= SWITCH_AFTER:
                self._switch()
        return joined

    def _switch(self) -> None:
        with self._lock:
            lines, self._seen = self._seen, None
        if lines is None:
            return
        try:
            ready = loaded()
        except (ImportError, OSError, ValueError) as exc:  # jieba's files missing or unreadable
            logger.warning("the C cut's tables cannot be made (%s): rjieba's cut is kept", exc)
            return
        if not ready:
            return
        checked = [(line, SEPARATOR.join(self._cut(line))) for line in CHECK_LINES] + lines
        differing = [line for line, joined in checked if _segment.cut(line) != joined]
        if differing:
            logger.warning(
                "the C cut gives other tokens than this rjieba on %d of %d lines (first: %r): rjieba's cut is kept",
                len(differing),
                len(checked),
                differing[0],
            )
            return
        self.by_c = True


def joined_cut(tokenizer: Tokenizer) -> Callable[[str], str]:
    """How a fingerprinter cuts a line into its joined tokens: :class:`RjiebaLines` for rjieba
    where the C cut is built (it gives rjieba's tokens, not Python jieba's), else the
    tokenizer's own cut."""
    if tokenizer.name == "rjieba" and _segment is not None:
        return RjiebaLines(tokenizer.cut)
    return lambda line: SEPARATOR.join(tokenizer.cut(line))
