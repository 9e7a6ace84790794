"""How a Chinese news site turns another site's article into its own reprint.

Every reprint gets a new title and credits its source; on top of that it takes a few edits
of ``transforms.py``, chosen at random: changed characters, half/full-width punctuation,
paragraphs split or merged, the last paragraph cut, a promotion paragraph inserted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from . import transforms

# The world's own width conversions: punctuation and digits, one way or the other.
_FULL_TO_HALF = transforms.to_half_width(transforms.MARKS + '"' + transforms.DIGITS)
_HALF_TO_FULL = transforms.to_full_width(transforms.MARKS + transforms.DIGITS)

MIN_KEPT = 0.78  # a cut reprint keeps at least this share of the original text


@dataclass
class Draft:
    """One copy of a story as a site publishes it, before the template is applied."""

    title: str
    paragraphs: list[str]  # the story's own text, as edited
    banner: str | None = None  # "来源：..." or "原标题：..." paragraph on top
    promo: tuple[int, str] | None = None  # (position, text) of an inserted promotion paragraph
    edits: list[str] = field(default_factory=list)  # names of the edits applied, for debugging

    def body(self) -> list[str]:
        paragraphs = list(self.paragraphs)
        if self.promo:
            position, text = self.promo
            paragraphs.insert(min(position, len(paragraphs)), text)
        if self.banner:
            paragraphs.insert(0, self.banner)
        return paragraphs


def width(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Turn full-width punctuation and digits half-width, or the other way round."""
    return transforms.convert_width(paragraphs, _FULL_TO_HALF if rng.random() < 0.7 else _HALF_TO_FULL)


EDITS = ("typos", "width", "split", "merge", "cut", "promo")


def retitle(title: str, rng: random.Random, style: str) -> str:
    """A new headline in the habits of the reprinting site."""
    head, _, tail = title.partition(" ")
    choice = rng.randrange(6)
    if tail and choice == 0:
        return f"{head}：{tail}"
    if tail and choice == 1:
        return f"{tail}，{head}"
    if tail and choice == 2:
        return head
    if choice == 3:
        return f"{style}{title}"
    if choice == 4:
        return f"{title}（图）"
    return f"{title.replace(' ', '，')}！"


def make_reprint(
    parent: Draft,
    original_chars: int,
    rng: random.Random,
    source: str,
    original_title: str,
    promo_text: str,
    title_style: str,
) -> Draft:
    """A reprint of ``parent`` (the original or another reprint) made by one site."""
    draft = replace(parent, paragraphs=list(parent.paragraphs), banner=None, promo=None, edits=[])
    draft.title = retitle(original_title, rng, title_style)
    for name in rng.sample(EDITS, rng.randint(2, 4)):
        if name == "typos":
            draft.paragraphs = transforms.swap_typos(draft.paragraphs, rng)
        elif name == "width":
            draft.paragraphs = width(draft.paragraphs, rng)
        elif name == "split":
            draft.paragraphs = transforms.split_middle(draft.paragraphs, rng)
        elif name == "merge":
            draft.paragraphs = transforms.merge_one(draft.paragraphs, rng)
        elif name == "cut":
            draft.paragraphs = transforms.drop_last(draft.paragraphs, original_chars, MIN_KEPT)
        elif name == "promo" and promo_text:
            draft.promo = (rng.randint(1, max(1, len(draft.paragraphs) - 1)), promo_text)
        draft.edits.append(name)
    banner = rng.randrange(4)
    if banner == 0:
        draft.banner = f"来源：{source}"
    elif banner == 1:
        draft.banner = f"原标题：{original_title.replace(' ', '，')}"
    elif banner == 2:
        draft.banner = f"【本文转自{source}，版权归原作者所有，如有侵权请联系删除】"
    return draft
