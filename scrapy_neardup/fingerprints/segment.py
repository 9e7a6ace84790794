"""jieba's cut (HMM on) in C, token for token jieba-rs's (rjieba's): a study, not yet used.

The C part (``_segment``) takes jieba's dictionary and HMM tables as arrays built here from
jieba's own files and cached: the dictionary with jieba-rs's rule for a word listed twice
(the last frequency, counted once in the total), the HMM's emission log-probabilities
rounded to 6 decimals as jieba-rs's embedded model has them.
"""

from __future__ import annotations

import ast
import functools
import os

import numpy as np

from .tables import Arrays, cached_arrays, code_signature, file_signature
from .text import package_dir

try:
    from . import _segment  # type: ignore[attr-defined]
except ImportError:  # not built: the study's benchmark says so
    _segment = None

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
