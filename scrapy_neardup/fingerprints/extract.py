"""From an HTML page to the plain text of its article body.

readability-lxml finds the body (navigation, side lists, comments and footers out) in a
tree parsed once (:mod:`.readable`); the body is then flattened to text with one paragraph per line, so that sentence splitting
sees paragraph ends. Reprints of one story on sites with different templates must come
out as nearly the same text, which is what fingerprinting compares.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from typing import Any

import lxml.etree

from .article_end import drop_captions, first_post, without_repeated_lines
from .headline_script import cjk_headline, without_foreign_lines

__all__ = ["ExtractionError", "decode_html", "extract_text", "html_to_text", "looks_binary"]


# The extractor of record, by the name settings and worker processes use.
DEFAULT_EXTRACTOR = "scrapy_neardup.fingerprints.extract.html_to_text"


class ExtractionError(ValueError):
    """The input is not an HTML page that text can be taken from (binary, empty...)."""


# Elements that end a paragraph: their text goes on a line of its own.
_BLOCKS = frozenset(
    [
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "table",
        "section",
        "article",
        "blockquote",
        "pre",
        "header",
        "footer",
        "figcaption",
        "dd",
        "dt",
        "dl",
        "hr",
        "form",
        "address",
        "aside",
        "main",
        "nav",
        "td",
        "th",
    ]
)
_SKIP = frozenset(["script", "style", "noscript", "template", "iframe", "svg", "head"])
# Control characters that text does not hold (tab, line feed, form feed and carriage return do).
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20)])
_LINE_SPACE = re.compile(r"[ \t\r\f\v\u3000\xa0]+")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)

BINARY_SAMPLE = 4096


def looks_binary(data: str | bytes) -> bool:
    """True for content that is not text: NUL bytes, or many control/undecodable characters.

    Only the beginning is looked at, so a huge page costs nothing here.
    """
    sample = data[:BINARY_SAMPLE]
    if not sample:
        return False
    if isinstance(sample, bytes):
        wide = _bom_codec(sample)
        if wide:  # UTF-16/32 text is full of NUL bytes: judge its characters instead
            return looks_binary(sample.decode(wide, errors="replace"))
        # Bytes are judged before decoding: legacy encodings (GBK, Big5) are not UTF-8.
        if b"\x00" in sample:
            return True
        return _controls(sample) > 0.05 * len(sample)
    if "\x00" in sample:
        return True
    bad = _controls(sample.encode("utf-8", "surrogatepass")) + sample.count("\ufffd")
    return bad > 0.05 * len(sample)


def _controls(data: bytes) -> int:
    """Control bytes in ``data`` (a control character is one byte in UTF-8), counted by
    deleting them with a table: a regex search is slow on CJK text."""
    return len(data) - len(data.translate(None, _CONTROL_BYTES))


def decode_html(data: bytes, encoding: str | None = None, content_type: str | None = None) -> str:
    """Decode page bytes: the given encoding, else the HTTP header, BOM, ``<meta charset>``,
    else UTF-8, with w3lib's rules (the ones Scrapy uses for ``response.text``)."""
    from w3lib.encoding import html_to_unicode

    if encoding:
        try:
            return data.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            pass
    header = content_type or ""
    _, text = html_to_unicode(header, data)
    if "\ufffd" in text and "\ufffd".encode() not in data:
        # A page declared (or taken for) UTF-8 that is not: Chinese sites often serve GBK under
        # a wrong label. GB18030 (a superset of GBK) is tried when it decodes the bytes whole.
        try:
            return data.decode("gb18030")
        except UnicodeDecodeError:
            pass
    return text


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _bom_codec(data: bytes) -> str | None:
    """The UTF-16/32 codec that the byte order mark at the start of ``data`` names, if any."""
    return next((codec for bom, codec in _BOMS if data.startswith(bom)), None)


def _as_text(html: str | bytes, encoding: str | None = None) -> str:
    if isinstance(html, (bytes, bytearray, memoryview)):
        data = bytes(html)
        if looks_binary(data):
            raise ExtractionError(f"binary content, not HTML ({len(data)} bytes)")
        html = decode_html(data, encoding)
    elif not isinstance(html, str):
        raise ExtractionError(f"expected HTML as str or bytes, got {type(html).__name__}")
    if looks_binary(html):
        raise ExtractionError(f"binary content, not HTML ({len(html)} characters)")
    declaration = _XML_DECL.match(html)  # at the start only: a search would try every position
    return html[declaration.end() :] if declaration else html


def _flatten(root: Any) -> str:
    """Text of ``root`` with a line break at every block element, white space collapsed."""
    from .pagewalk import walker  # readability is imported on first use, not at start-up

    joined = walker.flat_text(root, _SKIP, _BLOCKS) if walker is not None else _joined_text(root)
    lines = map(str.strip, _LINE_SPACE.sub(" ", joined).split("\n"))  # one sub, not one a line
    return "\n".join(filter(None, lines))  # no generator's frame a line: a page has hundreds


def _joined_text(root: Any) -> str:
    """The text of ``root`` and its tail, a line break before and after each block element,
    the elements of ``_SKIP`` and comments left out (not their tails). The C walks make the
    same in one read of the tree (``flat_text``)."""
    parts: list[str] = []

    def walk(element: Any) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        tag = tag.lower()
        if tag in _SKIP or element.tag is lxml.etree.Comment:
            if element.tail:
                parts.append(element.tail)
            return
        block = tag in _BLOCKS
        if block:
            parts.append("\n")
        if element.text and tag:
            parts.append(element.text)
        for child in element:
            walk(child)
        if block:
            parts.append("\n")
        if element.tail:
            parts.append(element.tail)

    walk(root)
    return "".join(parts)


_LISTY = frozenset(["div", "td", "ul", "ol", "li", "table", "section", "aside", "nav", "p", "dl"])


def _drop_link_lists(root: Any) -> None:
    """Remove blocks that are mostly link text (side lists, "related" boxes) left by readability.

    Old table layouts put the side column next to the article in one row, and readability
    keeps the whole row.
    """
    from .pagewalk import walker

    doomed = walker.link_lists(root, _LISTY, _LINKED) if walker is not None else _link_lists(root)
    for element in doomed:
        if element.getparent() is not None:
            element.drop_tree()


_LINKED = 0.6  # of a block's text in its links: a list of links


def _link_lists(root: Any) -> list:
    """The blocks below ``root`` that are mostly link text (the C walks find the same in one
    read of the tree: ``link_lists``)."""
    doomed = []
    for element in root.iterdescendants():
        if not isinstance(element.tag, str) or element.tag not in _LISTY:
            continue
        if next(element.iter("a"), None) is None:
            continue  # no link: nothing to weigh (its text is not read)
        text = element.text_content().strip()
        if not text:
            continue
        linked = sum(len(a.text_content().strip()) for a in element.iter("a"))
        if linked > _LINKED * len(text):
            doomed.append(element)
    return doomed


def _whole_body(html: str) -> str:
    """Fallback when readability finds no body: all visible text of the page."""
    root = _parse(html)
    for element in root.xpath("//nav|//header|//footer|//aside"):
        element.drop_tree()
    body = root.find("body")
    return _flatten(body if body is not None else root)


def _parse(html: str) -> Any:
    from .readable import parse_page  # readability is imported on first use, not at start-up

    try:
        return parse_page(html)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise ExtractionError(f"cannot parse HTML: {exc}") from None


def html_to_text(html: str | bytes, encoding: str | None = None) -> str:
    """The article body of ``html`` as plain text, one paragraph per line.

    Bytes are decoded (``encoding``, else ``<meta charset>``, else UTF-8). Raises
    :class:`ExtractionError` for binary content or input that is not HTML; returns ``""``
    for a page without visible text.
    """
    text = _as_text(html, encoding)
    if not text.strip():
        return ""
    from .readable import readable_article

    chinese = False
    try:
        tree = _parse(text)
        chinese = cjk_headline(tree)
        article = readable_article(tree, lambda: _parse(text), chinese)
    except (lxml.etree.ParserError, ValueError, TypeError):  # readability's Unparseable is a ValueError
        article = None
    body = ""
    if article is not None:
        drop_captions(article)
        _drop_link_lists(article)
        body = without_repeated_lines(first_post(_flatten(article)))
        if chinese:
            body = without_foreign_lines(body)
    if len(body) < 20:
        # readability gives up on pages with a single short block; take the visible text.
        fallback = _whole_body(text)
        if len(fallback) > len(body):
            body = fallback
    return body


def extract_text(response: Any, extractor: Callable[[Any], str] | None = None) -> str:
    """The article body of a Scrapy ``Response``, for spiders that extract themselves.

    Uses the response's own decoding (HTTP header, BOM, ``<meta charset>``); raises
    :class:`ExtractionError` for a binary response.
    """
    extractor = extractor or html_to_text
    text = getattr(response, "text", None)
    if isinstance(text, str):
        return extractor(text)
    body = getattr(response, "body", None)
    if isinstance(body, bytes):
        if looks_binary(body):
            raise ExtractionError(f"binary response from {getattr(response, 'url', '?')} ({len(body)} bytes), not HTML")
        return extractor(body)
    raise ExtractionError(f"not a response with a body: {type(response).__name__}")
