"""Pages nested deeper than the HTML parser goes, made shallow enough to parse.

libxml2 (under lxml) stops at 256 open elements and drops the rest of the page: a story
wrapped in 300 ``<div>``s would extract to nothing and pass beside its original as "no text".
Such a page is parsed again after :func:`shallow_html` takes out the tags of the elements in
the middle of each deep chain. The elements near the top (the page's frame) and near the
text (its paragraphs, links and line breaks) keep their tags, so readability still sees the
paragraphs; the text itself is never touched.
"""

from __future__ import annotations

import re

__all__ = ["KEEP_ABOVE", "KEEP_BELOW", "shallow_html"]

KEEP_ABOVE = 60  # the elements this near the top of the page keep their tags
KEEP_BELOW = 60  # and those with no more than this many levels below them

# A comment or a script/style element is passed over whole (it may hold what looks like tags);
# otherwise an opening or closing tag and its name.
_TOKEN = re.compile(
    r"<!--.*?(?:-->|\Z)|<(script|style)\b.*?(?:</\1\s*>|\Z)|<(/?)([a-zA-Z][^\s/>]*)[^>]*>",
    re.DOTALL | re.IGNORECASE,
)
_VOID = frozenset(
    ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"]
)


class _Open:
    __slots__ = ("close", "depth", "end", "height", "name", "start")

    def __init__(self, name: str, start: int, end: int, depth: int) -> None:
        self.name, self.start, self.end, self.depth = name, start, end, depth
        self.height = 0  # levels of elements below it
        self.close: tuple[int, int] | None = None  # where its closing tag is, if it has one


def shallow_html(html: str) -> str:
    """``html`` with the tags of deeply nested elements taken out: an element keeps its tags
    when it is at most :data:`KEEP_ABOVE` levels from the top or has at most
    :data:`KEEP_BELOW` levels below it, so no chain of elements is much deeper than the sum.
    Elements are counted as the tags open and close them (an unclosed tag stays open until
    a closing tag of an element around it), which never counts fewer levels than the parser."""
    stack: list[_Open] = []
    open_names: dict[str, int] = {}  # how many elements of each name are open
    closed: list[_Open] = []

    def pop() -> None:
        element = stack.pop()
        open_names[element.name] -= 1
        if stack:
            stack[-1].height = max(stack[-1].height, element.height + 1)
        closed.append(element)

    for match in _TOKEN.finditer(html):
        name = match.group(3)
        if name is None:
            continue
        name = name.lower()
        if match.group(2):  # a closing tag: closes its element and every one opened inside it
            if open_names.get(name):
                while stack[-1].name != name:
                    pop()
                stack[-1].close = match.span()
                pop()
        elif name not in _VOID and not match.group(0).endswith("/>"):
            stack.append(_Open(name, match.start(), match.end(), len(stack)))
            open_names[name] = open_names.get(name, 0) + 1
    while stack:
        pop()
    cuts = []
    for element in closed:
        if element.depth > KEEP_ABOVE and element.height > KEEP_BELOW:
            cuts.append((element.start, element.end))
            if element.close is not None:
                cuts.append(element.close)
    cuts.sort()
    parts, position = [], 0
    for start, end in cuts:
        parts.append(html[position:start])
        position = end
    parts.append(html[position:])
    return "".join(parts)
