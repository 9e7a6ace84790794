"""A story is written in the script of its headline.

A Chinese story on a page whose chrome is English (an author's bio, a list of sources, a
newsletter box, captions) can lose to that chrome when it is short: readability scores
English prose by its commas and length. When the page's headline (its <title> or first
<h1>) is Chinese, a block of Latin text is not the story while a block of Chinese text
scores near it, and a line of words in another script in an otherwise Chinese text (a
byline, a date in words, a caption, a promotion) is not part of the story either.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["CJK_SAMPLE", "cjk_count", "cjk_headline", "cjk_share", "without_foreign_lines"]

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(f"{_CJK.pattern}+")
_HEADLINE_SHARE = 0.5  # a headline at least this much CJK is a Chinese (or Japanese) one
_STORY_CJK = 50  # CJK characters a text needs before its lines without one are dropped
_A_STORY_OF_CJK = re.compile(f"(?:[^{_CJK.pattern[1:-1]}]*{_CJK.pattern}){{{_STORY_CJK}}}")
CJK_SAMPLE = 500  # characters of a block that tell its script
_WORD = re.compile(r"[^\W\d_]{2,}")  # a word of letters (a line of figures, times or rules is kept)
_WORDS = 2  # words a line without CJK needs to be taken for prose in another language


def cjk_count(text: str) -> int:
    """The CJK characters in ``text``: the length its runs of them take (counted by taking
    them out; a regex's list of matches makes a string of each character, four times slower)."""
    return len(text) - len(_CJK_RUN.sub("", text))


def cjk_share(text: str) -> float:
    """The share of CJK characters among the characters of ``text`` that are not white space,
    judged on its first ``CJK_SAMPLE`` characters (a block's script shows from its start)."""
    solid = "".join(text[:CJK_SAMPLE].split())
    return cjk_count(solid) / len(solid) if solid else 0.0


def cjk_headline(root: Any) -> bool:
    """Is the page's <title> or its first <h1> mostly CJK? (The <h1> is looked for only
    when the title is not: a page without one is walked whole.)"""
    title = root.find("head/title")
    if title is None:
        title = root.find(".//title")
    if title is not None and cjk_share(title.text_content()) >= _HEADLINE_SHARE:
        return True
    heading = next(root.iter("h1"), None)
    return heading is not None and cjk_share(heading.text_content()) >= _HEADLINE_SHARE


def without_foreign_lines(text: str) -> str:
    """``text`` without its lines of words in another script (no CJK character, two words or
    more), when it holds a story's worth of CJK characters. A line of figures, times or box
    rules stays: a Chinese story draws tables and schedules so."""
    if not _A_STORY_OF_CJK.match(text):
        return text
    return "\n".join(line for line in text.split("\n") if _CJK.search(line) or len(_WORD.findall(line)) < _WORDS)
