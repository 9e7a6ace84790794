"""Shared passages of two texts, found on folded text and marked on the original.

A reprint differs from its source in width, script, punctuation and spacing, so the two texts
are aligned on their content characters (letters and digits) after the folding the fingerprints
use (NFKC, lower case, Traditional to Simplified), and each matching block is mapped back to the
characters of the original text. A changed comma, an added space or a Traditional character
then lies inside a marked passage instead of cutting it in two; what one text has and the other
lacks stays unmarked, so the differences show.

The alignment is :class:`difflib.SequenceMatcher` in two passes: first over clauses (runs of
content characters between punctuation or spaces), where most of a reprint matches whole, then
over the characters of each stretch the first pass left unmatched (an edited clause). Character
alignment costs about the product of the two stretches' lengths, so the first pass keeps it to
small stretches; a budget bounds the rest, and only the first ``MAX_ALIGN_CHARS`` characters of
each text are aligned, whatever its size. Popular clauses ("记者", a repeated table cell) are
left to the character pass (``autojunk`` on clauses only): they would make the clause pass
quadratic and carry no passage of their own. With the extra ``fast``, the SequenceMatcher is
cydifflib's: the same algorithm compiled, the same blocks (the tests compare the two).
"""

from __future__ import annotations

import html
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cache
from itertools import accumulate
from typing import Any

import numpy as np

from ..fingerprints.kernel import kernel
from ..fingerprints.text import content_mask, fold_each_with_positions, fold_with_positions, text_tables, to_text

MIN_MARK_CHARS = 6  # content characters: shorter common runs are words shared by chance
# Characters of each text aligned at most: the clause pass slows down with the number of
# matching blocks times the length, so a whole book would take minutes; a news article is a
# few thousand characters.
MAX_ALIGN_CHARS = 100_000
# Sum over the stretches aligned character by character of the product of their lengths: a
# news-length rewrite fits many times over; a rewritten book does not.
CHARACTER_BUDGET = 200_000_000

Span = tuple[int, int]  # [start, end) in the original text


@dataclass
class Alignment:
    """The shared passages of texts A and B: ``pairs[i]`` is one passage, as a span of A and
    the span of B it matches, in text order; ``shared`` counts its content characters."""

    pairs: list[tuple[Span, Span]] = field(default_factory=list)
    shared: int = 0  # content characters inside the marked passages
    a_chars: int = 0  # content characters of A (of its aligned part)
    b_chars: int = 0
    complete: bool = True  # False when a cap or the budget left part of a text unaligned

    @property
    def a_spans(self) -> list[Span]:
        return [a for a, _ in self.pairs]

    @property
    def b_spans(self) -> list[Span]:
        return [b for _, b in self.pairs]


class _Content:
    """A text's content characters, folded, with the original position of each and the
    clauses they form."""

    def __init__(self, text: str) -> None:
        tables = text_tables()
        found = kernel.content_clauses(text, tables.fold, tables.content) if kernel is not None else None
        if found is not None:  # the C kernel's one pass: the same values as below
            self.chars, where, self.runs, offsets = found
            self.where = np.frombuffer(where, dtype=np.int32)
            self.starts = np.frombuffer(offsets, dtype=np.int32)
            return
        folded, where = fold_with_positions(text)
        if where is None:  # folding joined characters (a combining mark): fold one by one
            folded, where = fold_each_with_positions(text)
        mask = content_mask(folded)
        kept = np.flatnonzero(mask)
        self.chars = to_text(folded[kept])
        self.where = where[kept].astype(np.int32)  # half the memory of a kept (cached) text
        # The content characters with every other one as NUL (never content): split, the clauses.
        clauses = [run for run in to_text(np.where(mask, folded, 0)).split("\0") if run]
        self.runs = "\0".join(clauses)  # the clauses, one NUL between two
        # Where each clause starts in ``chars``, then where the last ends.
        self.starts = np.array(list(accumulate(map(len, clauses), initial=0)), dtype=np.int32)

    def clauses(self) -> tuple[list[str], list[int]]:
        """The clauses (runs of content characters) and where each starts in ``chars``."""
        return self.runs.split("\0") if self.runs else [], self.starts[:-1].tolist() or [0]

    def span(self, start: int, length: int) -> Span:
        return int(self.where[start]), int(self.where[start + length - 1]) + 1


class FoldedTexts:
    """Folded texts kept for their next alignment, the least recently used dropped first once
    they hold more than ``max_chars`` characters: a service lists the same stored entries
    again and again (an editor's page checks the entry as it is typed), and folding a stored
    text is a third of what marking it costs."""

    def __init__(self, max_chars: int = 3_000_000) -> None:
        self.max_chars = max_chars
        self.chars = 0
        self._kept: OrderedDict[str, _Content] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def folded(self, text: str) -> _Content:
        content = self._kept.get(text)
        if content is not None:
            self._kept.move_to_end(text)
            return content
        content = _Content(text[:MAX_ALIGN_CHARS])
        if len(content.chars) < self.max_chars:
            self._kept[text] = content
            self.chars += 1 + len(content.chars)
            while self.chars > self.max_chars:
                _, dropped = self._kept.popitem(last=False)
                self.chars -= 1 + len(dropped.chars)
        return content


def align(a: str, b: str, min_chars: int = MIN_MARK_CHARS) -> Alignment:
    """The passages of at least ``min_chars`` content characters that ``a`` and ``b`` share,
    in order (a monotone alignment: a passage moved elsewhere is matched once)."""
    return align_each(a, [b], min_chars)[0]


def align_each(
    a: str, others: list[str], min_chars: int = MIN_MARK_CHARS, kept: FoldedTexts | None = None
) -> list[Alignment]:
    """:func:`align` of ``a`` with each of ``others``, folding ``a`` once (a text checked
    against its similar entries); ``others`` folded earlier are taken from ``kept``."""
    if not others:
        return []
    one = _Content(a[:MAX_ALIGN_CHARS])
    a_clauses = one.clauses()
    alignments = []
    for b in others:
        complete = len(a) <= MAX_ALIGN_CHARS and len(b) <= MAX_ALIGN_CHARS
        other = kept.folded(b) if kept is not None else _Content(b[:MAX_ALIGN_CHARS])
        blocks, within_budget = _blocks(one, a_clauses, other)
        pairs, shared = [], 0
        for i, j, size in _joined(blocks):
            if size >= min_chars:
                pairs.append((one.span(i, size), other.span(j, size)))
                shared += size
        alignments.append(Alignment(pairs, shared, len(one.chars), len(other.chars), complete and within_budget))
    return alignments


@cache
def sequence_matcher() -> Any:
    """cydifflib's SequenceMatcher when installed, else difflib's; imported on first use, so
    that a crawl that marks nothing does not pay for the import."""
    try:
        from cydifflib import SequenceMatcher
    except ImportError:
        from difflib import SequenceMatcher
    return SequenceMatcher


def _blocks(
    one: _Content, one_clauses: tuple[list[str], list[int]], other: _Content
) -> tuple[list[tuple[int, int, int]], bool]:
    """Matching blocks (start in A, start in B, length) in content characters, and whether
    every unmatched stretch could be aligned within the budget (A's clauses given: found once
    for all the texts it is aligned with)."""
    SequenceMatcher = sequence_matcher()
    a_clauses, a_starts = one_clauses
    b_clauses, b_starts = other.clauses()
    clauses = SequenceMatcher(None, a_clauses, b_clauses, autojunk=True)
    blocks = []
    budget, complete = CHARACTER_BUDGET, True
    for tag, i1, i2, j1, j2 in clauses.get_opcodes():
        a_start, a_end = _char_range(a_starts, len(one.chars), i1, i2)
        b_start, b_end = _char_range(b_starts, len(other.chars), j1, j2)
        if tag == "equal":
            blocks.append((a_start, b_start, a_end - a_start))
        elif tag == "replace":
            cost = (a_end - a_start) * (b_end - b_start)
            if cost > budget:
                complete = False
                continue
            budget -= cost
            chars = SequenceMatcher(None, one.chars[a_start:a_end], other.chars[b_start:b_end], autojunk=False)
            blocks.extend((a_start + i, b_start + j, n) for i, j, n in chars.get_matching_blocks() if n)
    return blocks, complete


def _char_range(starts: list[int], length: int, first: int, stop: int) -> Span:
    """Content characters of clauses [first, stop), given where each clause starts."""
    start = starts[first] if first < len(starts) else length
    end = starts[stop] if stop < len(starts) else length
    return start, end


def _joined(blocks: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Blocks that continue each other in both texts, as one (a comma dropped between two
    matched clauses leaves nothing unmatched between them)."""
    joined: list[tuple[int, int, int]] = []
    for i, j, size in sorted(blocks):
        if joined:
            pi, pj, psize = joined[-1]
            if pi + psize == i and pj + psize == j:
                joined[-1] = (pi, pj, psize + size)
                continue
        joined.append((i, j, size))
    return joined


# ANSI: shared passages in bold red on a terminal, as the dedup literature marks them.
_ANSI_ON, _ANSI_OFF = "\x1b[1;31m", "\x1b[0m"
PLAIN_MARKS = ("[[", "]]")


def _pieces(text: str, spans: list[Span]) -> list[tuple[str, bool]]:
    """The text cut at the spans' edges: (piece, marked)."""
    pieces, at = [], 0
    for start, end in spans:
        start = max(start, at)  # characters folded alone may end one span and start the next
        if start > at:
            pieces.append((text[at:start], False))
        pieces.append((text[start:end], True))
        at = end
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces


def marked_for_terminal(text: str, spans: list[Span], colour: bool) -> str:
    """``text`` with its spans in colour (a terminal) or between ``[[`` and ``]]``."""
    on, off = (_ANSI_ON, _ANSI_OFF) if colour else PLAIN_MARKS
    return "".join(f"{on}{piece}{off}" if mark else piece for piece, mark in _pieces(text, spans))


def marked_html(text: str, spans: list[Span]) -> str:
    """``text`` HTML-escaped, its spans inside ``<mark>``."""
    return "".join(
        f"<mark>{html.escape(piece)}</mark>" if mark else html.escape(piece) for piece, mark in _pieces(text, spans)
    )
