"""How a Chinese news site turns another site's article into its own reprint.

Every reprint gets a new title and credits its source; on top of that it takes a few of the
edits below, chosen at random: changed characters, half/full-width punctuation, paragraphs
split or merged, the last paragraph cut, a promotion paragraph inserted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

# Characters that reprint editors (and input methods) swap for one another.
_TYPOS = {
    "的": "地", "地": "的", "得": "的", "在": "再", "再": "在", "已": "以", "以": "已", "做": "作",
    "作": "做", "那": "哪", "像": "象", "象": "像", "即": "既", "既": "即", "部": "步", "决": "绝",
    "座": "坐", "坐": "座", "需": "须", "须": "需", "订": "定", "定": "订", "帐": "账", "账": "帐",
}
_FULL_TO_HALF = {"，": ",", "：": ":", "；": ";", "！": "!", "？": "?", "（": "(", "）": ")", "“": '"', "”": '"'}
_FULL_TO_HALF.update({chr(0xFF10 + d): str(d) for d in range(10)})
_HALF_TO_FULL = {",": "，", ":": "：", ";": "；", "!": "！", "?": "？", "(": "（", ")": "）"}
_HALF_TO_FULL.update({str(d): chr(0xFF10 + d) for d in range(10)})

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


def typos(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Change two to four characters somewhere in the text."""
    spots = [(i, j) for i, p in enumerate(paragraphs) for j, ch in enumerate(p) if ch in _TYPOS]
    out = [list(p) for p in paragraphs]
    for i, j in rng.sample(spots, min(len(spots), rng.randint(2, 4))):
        out[i][j] = _TYPOS[out[i][j]]
    return ["".join(p) for p in out]


def width(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Turn full-width punctuation and digits half-width, or the other way round."""
    table = str.maketrans(_FULL_TO_HALF if rng.random() < 0.7 else _HALF_TO_FULL)
    return [p.translate(table) for p in paragraphs]


def split(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Split one paragraph of several sentences in two, after a full stop."""
    choices = [i for i, p in enumerate(paragraphs) if "。" in p[:-1]]
    if not choices:
        return paragraphs
    i = rng.choice(choices)
    p = paragraphs[i]
    stops = [k + 1 for k, ch in enumerate(p[:-1]) if ch == "。"]
    cut = min(stops, key=lambda k: abs(k - len(p) // 2))
    return paragraphs[:i] + [p[:cut], p[cut:]] + paragraphs[i + 1 :]


def merge(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Join two neighbouring paragraphs into one."""
    if len(paragraphs) < 3:
        return paragraphs
    i = rng.randrange(len(paragraphs) - 1)
    return paragraphs[:i] + [paragraphs[i] + paragraphs[i + 1]] + paragraphs[i + 2 :]


def cut(paragraphs: list[str], original_chars: int) -> list[str]:
    """Drop the last paragraph, when what is left is still most of the story."""
    if len(paragraphs) < 4:
        return paragraphs
    kept = paragraphs[:-1]
    if sum(map(len, kept)) < MIN_KEPT * original_chars:
        return paragraphs
    return kept


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
            draft.paragraphs = typos(draft.paragraphs, rng)
        elif name == "width":
            draft.paragraphs = width(draft.paragraphs, rng)
        elif name == "split":
            draft.paragraphs = split(draft.paragraphs, rng)
        elif name == "merge":
            draft.paragraphs = merge(draft.paragraphs, rng)
        elif name == "cut":
            draft.paragraphs = cut(draft.paragraphs, original_chars)
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
