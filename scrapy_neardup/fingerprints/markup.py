"""A page's markup made lighter before lxml parses it: the same tree where extraction looks.

lxml's parse is the largest part of extracting a real page, and about half of it goes on
attributes (links' addresses, pictures' sources, data-* and event handlers), which extraction
never reads. The C scan ``_markup`` follows libxml2's HTML tokenizer through the markup and
leaves out every start tag's attributes but :data:`READ_ATTRIBUTES` (the tags that a thread's
posts are made of keep all theirs: posts are told by their shape, :mod:`.article_end`), the text of scripts,
styles and comments, and the content of the elements that ``parse_page`` takes out of the
tree with all they hold (:data:`EMPTIED_TAGS`, and those hidden by a ``hidden`` attribute or
a ``display: none`` style), keeping every line break, so elements keep their source lines.
Such an element keeps its tags and loses its content only where libxml2's tree builder
would end it at its own end tag (nothing inside closes it or an element around it), so the
tree is the same once ``parse_page`` has taken it out; lxml builds no nodes for menus and
hidden panels it would throw away. It follows the tokenizer of libxml2 2.14 (HTML5
tokenization); with an older libxml2, or where the module is not built, lxml parses the page
as it is and extraction gives the same text. One measure sees the difference: readability
tries again, less ruthless, when the markup of its article is under 250 characters, and the
lighter markup is shorter by the attributes left out, so an article with under 250
characters of text may be tried again where the page's own markup was long enough.
"""

from __future__ import annotations

import importlib
from typing import Any

import lxml.etree

from .article_end import POST_TAGS

__all__ = ["EMPTIED_TAGS", "NEVER_TEXT", "READ_ATTRIBUTES", "WHOLE_TAGS", "lighter_markup"]

# Every attribute that extraction reads: readability's class and id weights (and the
# captions' class), hidden elements (style, hidden), the article body's mark (itemprop) and
# hidden inputs (type).
READ_ATTRIBUTES = ("class", "id", "style", "hidden", "itemprop", "type")
WHOLE_TAGS = tuple(sorted(POST_TAGS))  # elements that keep every attribute

# Never part of an article's text: parse_page takes these elements out of the tree, with <nav>.
NEVER_TEXT = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "svg",
    "canvas",
    "object",
    "embed",
    "select",
    "button",
    "textarea",
    "link",
    "meta",
)
EMPTIED_TAGS = (*NEVER_TEXT, "nav")

_HTML5_TOKENIZER = (2, 14, 0)  # the libxml2 whose tokenizer the scan follows
# The libxml2 whose tree builder the scan follows to know where an element ends: with another,
# elements keep their content (lxml parses them and parse_page takes them out).
_TREE_BUILDER = (2, 14)
_EMPTIES = lxml.etree.LIBXML_VERSION[:2] == _TREE_BUILDER


def _load_scanner() -> Any:
    if lxml.etree.LIBXML_VERSION < _HTML5_TOKENIZER:
        return None
    try:
        return importlib.import_module(f"{__package__}._markup")
    except ImportError:  # pragma: no cover - installs without a compiler parse the page as it is
        return None


_scanner = _load_scanner()


def lighter_markup(html: str) -> str:
    """``html`` without what extraction never reads from its tree (the page itself where the
    scan is not built)."""
    if _scanner is None:
        return html
    return _scanner.slim(html, READ_ATTRIBUTES, WHOLE_TAGS, EMPTIED_TAGS if _EMPTIES else (), _EMPTIES)
