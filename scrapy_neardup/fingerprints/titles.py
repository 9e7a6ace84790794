"""Headlines, and the original title a repost declares: what names the article a text is.

A portal reposting the first paragraphs of an article puts a credit line above them,
"来源：…  原标题：X": this text is the article whose headline is X. The line is cut as a
notice before fingerprinting (:mod:`.notices`), so the title it names is kept apart, as a
hash, beside the text's own headline (the item's title field, when the caller gives one).
Both are normalised as the text is (width and case folded, Traditional as Simplified) and
only their letters and digits kept, so a headline and the title declared for it compare
equal whatever their spacing and punctuation.
"""

from __future__ import annotations

import re

import xxhash

from .notices import CREDIT_LINE_CHARS
from .text import content_chars, fold_codes, to_text

# On folded text: "原标题:" where a credit line starts or after another label of that line,
# up to the line's end or the next label (来源：…, 编辑：…).
_DECLARED = re.compile(r"(?:^|[\s(\[【])原标题 ?:([^\n]*)", re.MULTILINE)
_NEXT_LABEL = re.compile(r"\s(?:来源|稿件来源|责任编辑|编辑|作者) ?:")
_HEAD_CHARS = 400  # the credit lines stand above the text


def title_hash(title: str | None) -> int:
    """A 64-bit hash of a headline's letters and digits after normalisation; 0 for none."""
    chars = content_chars(title) if title else ""
    if not chars:
        return 0
    return xxhash.xxh64_intdigest(chars.encode("utf-8", "surrogatepass")) or 1


def declared_title(text: str) -> str | None:
    """The original title a repost's credit line names (原标题：X) near the text's start."""
    head = text[:_HEAD_CHARS]
    # Most texts: no credit line to fold and search. Only these characters fold to 原 and to
    # 题 (the folding tables' test says so).
    if "原" not in head or ("题" not in head and "題" not in head):
        return None
    found = _DECLARED.search(to_text(fold_codes(head)))
    if found is None:
        return None
    title = _NEXT_LABEL.split(found.group(1), maxsplit=1)[0].strip()
    return title if title and len(found.group(0)) <= CREDIT_LINE_CHARS else None


def declared_hash(text: str) -> int:
    """:func:`title_hash` of the original title ``text`` declares; 0 for none."""
    return title_hash(declared_title(text))
