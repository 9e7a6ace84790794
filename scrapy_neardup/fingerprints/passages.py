"""Passages of a text that may be another story's sentence: what related-story lookups ask for.

A story is filed under the hashes of its longest sentences. An article quoting it rarely
keeps the quoted sentence alone: a frame ("据报道，“...”") or its own clause joins it into a
longer sentence. So every run of whole clauses of a sentence (between commas, colons, quote
marks or the sentence's ends) is hashed like a sentence, and a stored story filed under one of
those hashes holds the same passage. Short runs are left out: a short clause is shared by chance.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right

import numpy as np

from .text import content_bytes, fold_with_positions, sentence_ends, span_key, to_text

MIN_PASSAGE_CHARS = 20  # content characters: a shorter shared run is a phrase, not a passage
# Clauses in one passage at most: a sentence listing hundreds of items would otherwise cost a
# hash for every pair of its commas.
MAX_CLAUSES = 24
# Passages of one text at most (the first, in text order): a store read per passage, and a
# news article has a few hundred.
MAX_PASSAGES = 5000

# Clause marks as folding leaves them (full-width commas and colons become ASCII), by code point.
_MARKS = np.zeros(0x10000, dtype=bool)
_MARKS[list(map(ord, ',:"“”‘’「」『』()、'))] = True


class Passages:
    """A text's passages: the hash of each (``keys``, in text order) and its text (:meth:`show`)."""

    def __init__(self, text: str, min_chars: int = MIN_PASSAGE_CHARS) -> None:
        folded, where = fold_with_positions(text)
        ends, content = sentence_ends(folded)
        before = np.cumsum(content) - content  # content characters before each character
        total = int(content.sum())
        sentences = sorted({0, total, *before[ends].tolist()})
        marks = _MARKS[np.minimum(folded, len(_MARKS) - 1)] & (folded < len(_MARKS))
        cuts = sorted({0, total, *before[ends | marks].tolist()})
        hashed = content_bytes(folded[content])
        self._spans: dict[int, tuple[int, int]] = {}
        spans = self._spans
        for first, stop in itertools.pairwise(sentences):
            if stop - first < min_chars:
                continue
            inside = cuts[bisect_left(cuts, first) : bisect_right(cuts, stop)]
            for i, start in enumerate(inside):
                if len(spans) >= MAX_PASSAGES:
                    break
                for end in inside[i + 1 : i + 1 + MAX_CLAUSES]:
                    if end - start >= min_chars:
                        spans.setdefault(span_key(hashed, start, end), (start, end))
        self.keys = list(spans)[:MAX_PASSAGES]  # the last start may have added a few more
        self._text, self._folded, self._where = text, folded, where
        self._content = np.flatnonzero(content)

    def show(self, key: int) -> str:
        """The passage of ``key`` as the text has it, punctuation inside included (folded when
        the text's folding did not go character by character)."""
        start, end = self._spans[key]
        first, last = int(self._content[start]), int(self._content[end - 1])
        if self._where is None:
            return to_text(self._folded[first : last + 1])
        return self._text[int(self._where[first]) : int(self._where[last]) + 1]


def passages_of(text: str, min_chars: int = MIN_PASSAGE_CHARS) -> Passages:
    """Every run of whole clauses of a sentence with at least ``min_chars`` content characters."""
    return Passages(text, min_chars)
