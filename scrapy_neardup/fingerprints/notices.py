"""Site notices: what a site writes around every story it publishes, left out of fingerprints.

A reprinting site appends its own rights notice or disclaimer (免责声明：本网转载的稿件…),
often longer than a short story, and puts a source or editor line above or below (来源：…,
原标题：…, 责任编辑：…). Counted as text, such a notice makes a short reprint unlike its
original, and two different short stories of one site alike. So they are cut from the folded
text before anything is fingerprinted:

- a sentence that speaks of the site itself (本网, 本站, 本报, 本文, …, not the 本报讯 or
  本报记者 of a news story) with two or more words of rights and liability (转载, 版权,
  授权, 观点, 真实性, …), or that begins with a notice heading (免责声明：, 版权声明：);
- a line that begins with a source or editor label (来源：, 原标题：, 本文转载自, 责任编辑：)
  and is no longer than such a line is.

A news sentence about copyright rarely meets both conditions of the first rule; when it does,
only that sentence is left out, in every copy of the story alike.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

import numpy as np

from .kernel import kernel
from .text import SENTENCE_ENDS, fold_codes, to_text

# Patterns on folded text (text.fold_codes): full-width colons and brackets are their ASCII
# forms, and Traditional characters and some variants their Simplified ones (著 is 着).
_SELF = ("本网站", "本网", "本站", "本报", "本刊", "本台", "本平台", "本公众号", "本号", "本文", "作者本人")
_NOT_SELF = ("讯", "记者", "评论员", "通讯员", "特约", "驻")  # 本报讯, 本报记者: a news story's own
_RIGHTS = (
    "转载",
    "版权",
    "授权",
    "著作权",
    "免责",
    "侵权",
    "摘编",
    "复制",
    "出处",
    "追究",
    "法律责任",
    "观点",
    "立场",
    "真实性",
    "赞同",
    "删除",
    "联系",
    "许可",
    "声明",
    "解释权",
)
# A promotion: a call to action on one of the site's channels (关注我们的公众号…, 下载…客户端).
_CHANNELS = ("公众号", "客户端", "二维码", "微信号", "微博号", "头条号", "视频号", "小程序")
_ACTIONS = ("关注", "下载", "扫描", "扫码", "搜索", "点击", "订阅", "分享给", "转发给")
_HEADINGS = ("免责声明", "版权声明", "特别声明", "郑重声明", "法律声明")
_LABELS = ("来源", "原标题", "稿件来源", "责任编辑", "编辑", "作者")  # followed by a colon
_LINE_OPENINGS = ("本文转载自", "转载自")
_LEAD = " \t([【"  # what may stand before a credit line's label
CREDIT_LINE_CHARS = 80  # a longer line that starts with a label is text, not a credit line

_ENDS = re.compile(f"[{re.escape(SENTENCE_ENDS)}]")


@dataclass(frozen=True)
class _Patterns:
    """The words above, folded like the text. Each pattern is a plain alternation of words
    (or anchored at a line start), which the regular expression engine scans for fast."""

    anchors: re.Pattern  # a self-reference, a heading or a channel
    self_words: frozenset[str]
    channels: frozenset[str]
    label: re.Pattern  # matched at a line start
    rights: re.Pattern
    actions: re.Pattern


def _folded(values: tuple[str, ...]) -> list[str]:
    """The words folded like the text, longest first (the order an alternation tries them)."""
    return sorted(set(to_text(fold_codes("\n".join(values))).split("\n")), key=len, reverse=True)


_ANCHORS = _SELF + tuple(heading + ":" for heading in _HEADINGS) + _CHANNELS


@functools.lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    def words(values: tuple[str, ...]) -> str:
        return "|".join(map(re.escape, _folded(values)))

    return _Patterns(
        anchors=re.compile(words(_ANCHORS)),
        self_words=frozenset(_folded(_SELF)),
        channels=frozenset(_folded(_CHANNELS)),
        # After a line break (the text is given one in front): scanned for its first character.
        label=re.compile(rf"\n[{re.escape(_LEAD)}]*(?:(?:{words(_LABELS)}) ?:|{words(_LINE_OPENINGS)})"),
        rights=re.compile(words(_RIGHTS)),
        actions=re.compile(words(_ACTIONS)),
    )


def notice_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) spans of ``text`` (folded) that are site notices or credit lines,
    each ending with its sentence or line end, in order, not overlapping."""
    patterns = _patterns()
    spans = [(start, end) for start, end in _line_spans(text, patterns.label) if end - start <= CREDIT_LINE_CHARS]
    # Each sentence is found by bisecting its ends and examined once per kind of anchor, so a
    # long text full of anchor words costs linear time, not a scan per anchor.
    ends: list[int] | None = None  # found at the first anchor: most texts have none
    examined: dict[tuple[int, str], bool] = {}
    for anchor in patterns.anchors.finditer(text):
        word = anchor.group()
        if word in patterns.self_words and text.startswith(_NOT_SELF, anchor.end()):
            continue
        if ends is None:
            ends = [found.end() for found in _ENDS.finditer(text)]
        start, end = _sentence_around(ends, anchor.start(), anchor.end(), len(text))
        if word in patterns.channels:
            kind = "channel"
        elif word in patterns.self_words:
            kind = "self"
        else:  # a notice heading
            spans.append((start, end))
            continue
        found = examined.get((start, kind))
        if found is None:
            if kind == "channel":
                found = patterns.actions.search(text, start, end) is not None
            else:
                found = len(set(patterns.rights.findall(text, start, end))) >= 2
            examined[(start, kind)] = found
        if found:
            spans.append((start, end))
    return merged_spans(spans)


def _line_spans(text: str, label: re.Pattern) -> list[tuple[int, int]]:
    """The lines that open with a source or editor label."""
    lines = "\n" + text  # positions in it are one past those in text
    return [(found.start(), _line_end(text, found.end() - 1)) for found in label.finditer(lines)]


def merged_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans sorted, those that overlap or touch joined into one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def strip_notices(codes: np.ndarray, compiled: bool = True) -> np.ndarray:
    """Folded code points without the site notices and credit lines (:func:`notice_spans`);
    the same array when there are none. The C kernel finds the same spans on the code points
    (no text made, no regex); ``compiled=False`` takes the regex path (tests compare the two)."""
    if compiled and kernel is not None:
        codes = np.ascontiguousarray(codes, dtype=np.uint32)
        spans = merged_spans(kernel.notice_spans(codes, *_kernel_words(), CREDIT_LINE_CHARS))
    else:
        text = to_text(codes)
        spans = notice_spans(text)
        if len(text) != len(codes):  # pragma: no cover - to_text maps one code point to one char
            raise AssertionError("folded text and code points differ in length")
    if not spans:
        return codes
    kept, at = [], 0
    for start, end in spans:  # in order, apart
        kept.append(codes[at:start])
        at = end
    kept.append(codes[at:])
    return np.concatenate(kept)


# The kinds of words and the bits of their first characters, as _kernel.c numbers them.
(_K_RIGHTS, _K_HEADING, _K_SELF, _K_CHANNEL, _K_NOT_SELF, _K_ACTION, _K_LABEL, _K_OPENING) = range(8)
_F_ANCHOR, _F_RIGHTS, _F_ACTION, _F_END, _F_LEAD = 1, 2, 4, 8, 16


@functools.lru_cache(maxsize=1)
def _kernel_words() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rules' words for the C kernel: their code points one after another; the offset,
    length, kind and next word with the same first character of each, every kind in its
    pattern's order (longest first; the rights words first, so a bit of their index tells
    them apart); the bits of the characters that start a word of a kind looked for at every
    character, a sentence end or a lead; and 1 + the first word each character starts."""
    channels, self_words = set(_folded(_CHANNELS)), set(_folded(_SELF))
    listed = [(word, _K_RIGHTS) for word in _folded(_RIGHTS)]
    if len(listed) > 64:  # pragma: no cover - the kernel keeps the rights words seen in 64 bits
        raise AssertionError("more than 64 rights words")
    listed += [
        (word, _K_CHANNEL if word in channels else _K_SELF if word in self_words else _K_HEADING)
        for word in _folded(_ANCHORS)
    ]
    listed += [(word, _K_NOT_SELF) for word in _NOT_SELF]
    listed += [(word, _K_ACTION) for word in _folded(_ACTIONS)]
    listed += [(word, _K_LABEL) for word in _folded(_LABELS)]
    listed += [(word, _K_OPENING) for word in _folded(_LINE_OPENINGS)]
    chars: list[int] = []
    words = np.zeros((len(listed), 4), dtype=np.int32)
    first = np.zeros(0x10000, dtype=np.uint8)
    head = np.zeros(0x10000, dtype=np.uint8)
    bits = {
        _K_RIGHTS: _F_RIGHTS,
        _K_HEADING: _F_ANCHOR,
        _K_SELF: _F_ANCHOR,
        _K_CHANNEL: _F_ANCHOR,
        _K_ACTION: _F_ACTION,
    }
    for index in reversed(range(len(listed))):  # each chain in the order listed
        word, kind = listed[index]
        words[index, 1:] = (len(word), kind, int(head[ord(word[0])]) - 1)
        head[ord(word[0])] = index + 1
        first[ord(word[0])] |= bits.get(kind, 0)
    for index, (word, _) in enumerate(listed):
        words[index, 0] = len(chars)
        chars += map(ord, word)
    for char in SENTENCE_ENDS:
        first[ord(char)] |= _F_END
    for char in _LEAD:
        first[ord(char)] |= _F_LEAD
    return np.array(chars, dtype=np.uint32), words, first, head


def _sentence_around(ends: list[int], first: int, last: int, length: int) -> tuple[int, int]:
    """The sentence holding ``text[first:last]``: from just after the sentence end before
    ``first`` to just after the first one at or after ``last`` (``ends``: the positions just
    past each sentence end, in order)."""
    before = bisect.bisect_right(ends, first) - 1
    after = bisect.bisect_right(ends, last)
    return (ends[before] if before >= 0 else 0), (ends[after] if after < len(ends) else length)


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end + 1
