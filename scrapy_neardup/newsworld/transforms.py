"""Reprint transformations: what Chinese sites do to an article they copy.

The one source of them for the news world, the tests' corpus and the benchmarks. Each takes
the article's paragraphs and returns new ones (never changing its argument); the random ones
draw only from the ``random.Random`` they are given, so a seed gives the same reprint. Which
transformations a reprint gets, and how often, is the caller's recipe: the news world's in
``reprint.py``, the accuracy benchmark's in ``benchmarks/reprints.py``.
"""

from __future__ import annotations

import bisect
import random
import re
import string

DIGITS = string.digits
LETTERS = string.ascii_letters
MARKS = ",:;!?()"  # the ASCII forms of ，：；！？（）
ASCII = "".join(map(chr, range(0x21, 0x7F)))
_FULL_OFFSET = 0xFEE0  # a full-width form's code point minus its ASCII one

# Characters that reprint editors (and input methods) swap for one another.
TYPOS = {
    "的": "地",
    "地": "的",
    "得": "的",
    "在": "再",
    "再": "在",
    "已": "以",
    "以": "已",
    "做": "作",
    "作": "做",
    "那": "哪",
    "像": "象",
    "象": "像",
    "即": "既",
    "既": "即",
    "部": "步",
    "决": "绝",
    "座": "坐",
    "坐": "座",
    "需": "须",
    "须": "需",
    "订": "定",
    "定": "订",
    "帐": "账",
    "账": "帐",
}
ZERO_WIDTH_AND_SPACES = (" ", "\u3000", "\u200b", "\ufeff", "\xa0", "\u200d")
_SENTENCE_END = re.compile(r"(?<=[。！？；])")
_CUT_POINT = re.compile(r"[。！？；\n]")


def _is_han(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff"


def sentences(paragraph: str) -> list[str]:
    """The sentences of a paragraph, each with its end mark (。！？；)."""
    return [s for s in _SENTENCE_END.split(paragraph) if s]


# ---- width: how a CMS or an editor's input method writes digits, letters and punctuation ----


def to_full_width(chars: str) -> dict[int, int]:
    """A ``str.translate`` table turning each ASCII character of ``chars`` full-width."""
    return {ord(c): ord(c) + _FULL_OFFSET for c in chars}


def to_half_width(chars: str) -> dict[int, int]:
    """A ``str.translate`` table turning the full-width forms of ``chars`` back to ASCII.

    ``"`` in ``chars`` stands for the Chinese quotation marks “ and ”.
    """
    table = {ord(c) + _FULL_OFFSET: ord(c) for c in chars if c != '"'}
    if '"' in chars:
        table.update({ord("“"): ord('"'), ord("”"): ord('"')})
    return table


def convert_width(
    paragraphs: list[str], table: dict[int, int], rng: random.Random | None = None, share: float = 1.0
) -> list[str]:
    """Every character in ``table`` converted; with ``rng``, each one only with probability ``share``."""
    if rng is None:
        return [p.translate(table) for p in paragraphs]
    return [
        "".join(chr(table[ord(c)]) if ord(c) in table and rng.random() < share else c for c in p) for p in paragraphs
    ]


def ascii_periods(paragraphs: list[str]) -> list[str]:
    """。 written as an ASCII full stop, as some sites do."""
    return [p.replace("。", ".") for p in paragraphs]


# ---- changed characters ----


def replace_first(paragraphs: list[str], pairs: list[tuple[str, str]]) -> list[str]:
    """Each ``(old, new)`` replaced once, in the first paragraph that contains ``old``."""
    out = list(paragraphs)
    for old, new in pairs:
        for i, text in enumerate(out):
            if old in text:
                out[i] = text.replace(old, new, 1)
                break
    return out


def spread_edits(paragraphs: list[str], count: int) -> list[str]:
    """``count`` Chinese characters at evenly spread places changed to 的 (or 了 where 的 stood)."""
    chars = list("\n".join(paragraphs))
    for i in range(count):
        position = (2 * i + 1) * len(chars) // (2 * count + 1)
        if _is_han(chars[position]):
            chars[position] = "的" if chars[position] != "的" else "了"
    return "".join(chars).split("\n")


def swap_typos(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Two to four characters swapped for the one an input method confuses them with (:data:`TYPOS`)."""
    spots = [(i, j) for i, p in enumerate(paragraphs) for j, ch in enumerate(p) if ch in TYPOS]
    out = [list(p) for p in paragraphs]
    for i, j in rng.sample(spots, min(len(spots), rng.randint(2, 4))):
        out[i][j] = TYPOS[out[i][j]]
    return ["".join(p) for p in out]


def random_edits(paragraphs: list[str], rng: random.Random, pool: str, most: int = 10) -> list[str]:
    """One to ``most`` Chinese characters replaced, preceded by an inserted one, or deleted.

    New characters are drawn from ``pool``.
    """
    chars = list("\n".join(paragraphs))
    for _ in range(rng.randint(1, most)):
        spots = [i for i, c in enumerate(chars) if _is_han(c)]
        if not spots:
            break
        i = rng.choice(spots)
        op = rng.random()
        if op < 0.5:
            chars[i] = rng.choice(pool)
        elif op < 0.75:
            chars.insert(i, rng.choice(pool))
        else:
            del chars[i]
    return "".join(chars).split("\n")


def random_substitutions(paragraphs: list[str], rng: random.Random, pool: str, count: int) -> list[str]:
    """``count`` places drawn anywhere in the text; a Chinese character there becomes one of ``pool``."""
    chars = list("\n".join(paragraphs))
    for _ in range(count):
        position = rng.randrange(len(chars))
        if _is_han(chars[position]):
            chars[position] = rng.choice(pool)
    return "".join(chars).split("\n")


# ---- paragraphs split, merged, cut ----


def split_middle(paragraphs: list[str], rng: random.Random) -> list[str]:
    """One paragraph of several sentences split in two, at the full stop nearest its middle."""
    choices = [i for i, p in enumerate(paragraphs) if "。" in p[:-1]]
    if not choices:
        return paragraphs
    i = rng.choice(choices)
    p = paragraphs[i]
    stops = [k + 1 for k, ch in enumerate(p[:-1]) if ch == "。"]
    cut = min(stops, key=lambda k: abs(k - len(p) // 2))
    return paragraphs[:i] + [p[:cut], p[cut:]] + paragraphs[i + 1 :]


def split_random(paragraphs: list[str], rng: random.Random, share: float = 0.6) -> list[str]:
    """Each paragraph of several sentences split in two with probability ``share``, after a random sentence."""
    out = []
    for p in paragraphs:
        parts = sentences(p)
        if len(parts) >= 2 and rng.random() < share:
            at = rng.randrange(1, len(parts))
            out += ["".join(parts[:at]), "".join(parts[at:])]
        else:
            out.append(p)
    return out


def merge_at(paragraphs: list[str], i: int) -> list[str]:
    """Paragraphs ``i`` and ``i + 1`` joined into one."""
    return paragraphs[:i] + [paragraphs[i] + paragraphs[i + 1]] + paragraphs[i + 2 :]


def merge_one(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Two neighbouring paragraphs joined, when there are at least three."""
    if len(paragraphs) < 3:
        return paragraphs
    return merge_at(paragraphs, rng.randrange(len(paragraphs) - 1))


def merge_random(paragraphs: list[str], rng: random.Random, share: float = 0.5) -> list[str]:
    """Each paragraph joined to the one before with probability ``share``."""
    out = [paragraphs[0]]
    for p in paragraphs[1:]:
        if rng.random() < share:
            out[-1] += p
        else:
            out.append(p)
    return out


def merge_pairs(paragraphs: list[str]) -> list[str]:
    """Paragraphs joined two by two."""
    return ["".join(paragraphs[i : i + 2]) for i in range(0, len(paragraphs), 2)]


def cut_chars(paragraphs: list[str], share: float) -> list[str]:
    """The first ``share`` of the text's characters (at least one), wherever that ends."""
    text = "\n".join(paragraphs)
    return text[: max(1, int(len(text) * share))].split("\n")


def cut_at_stop(paragraphs: list[str], share: float) -> list[str]:
    """The first ``share`` of the text, ending at the last 。 before that point."""
    text = "\n".join(paragraphs)
    end = text.rfind("。", 0, int(len(text) * share))
    return text[: end + 1].split("\n")


def cut_near_end(paragraphs: list[str], share: float) -> list[str]:
    """The first ``share`` of the text, ending at a sentence or paragraph end when one is near.

    With none in the last 15% before that point, the text is cut mid-sentence, as some sites do.
    """
    text = "\n".join(paragraphs)
    target = int(len(text) * share)
    ends = [m.end() for m in _CUT_POINT.finditer(text)]
    at = ends[bisect.bisect_right(ends, target) - 1] if ends and ends[0] <= target else target
    if at < 0.85 * target:
        at = target
    return text[:at].rstrip("\n").split("\n")


def drop_last(paragraphs: list[str], original_chars: int, min_kept: float) -> list[str]:
    """The last paragraph dropped, when there are four or more and ``min_kept`` of ``original_chars`` stays."""
    if len(paragraphs) < 4:
        return paragraphs
    kept = paragraphs[:-1]
    if sum(map(len, kept)) < min_kept * original_chars:
        return paragraphs
    return kept


def keep_first(paragraphs: list[str], rng: random.Random, low: float = 0.8) -> list[str]:
    """The first paragraphs only: a share drawn between ``low`` and 1 of them (at least one)."""
    return paragraphs[: max(1, round(len(paragraphs) * rng.uniform(low, 1.0)))]


# ---- lines added: source banners, editor lines, promotions, white space ----


def insert_line(paragraphs: list[str], at: int, line: str) -> list[str]:
    """``line`` as a paragraph of its own at index ``at``."""
    return paragraphs[:at] + [line] + paragraphs[at:]


def insert_random(paragraphs: list[str], rng: random.Random, line: str, end_share: float = 0.5) -> list[str]:
    """``line`` appended with probability ``end_share``, else inserted after a random paragraph."""
    at = len(paragraphs) if rng.random() < end_share else rng.randrange(1, len(paragraphs) + 1)
    return insert_line(paragraphs, at, line)


def prefix_first(paragraphs: list[str], head: str) -> list[str]:
    """``head`` written at the start of the first paragraph (an inline 【...讯】 dateline)."""
    return [head + paragraphs[0]] + paragraphs[1:]


def scatter_spaces(paragraphs: list[str], rng: random.Random) -> list[str]:
    """Spaces, ideographic spaces and zero-width characters strewn in; half the time 　　 indents."""
    out = []
    indent = rng.random() < 0.5
    for p in paragraphs:
        chars = list(p)
        for _ in range(rng.randint(0, max(1, len(p) // 60))):
            chars.insert(rng.randrange(0, len(chars) + 1), rng.choice(ZERO_WIDTH_AND_SPACES))
        out.append(("\u3000\u3000" if indent else "") + "".join(chars))
    return out
