"""readability-lxml run on a tree that was parsed once.

readability parses the page itself, cleans a deep copy of it, serializes its choice to a
string, and the caller parses that string again. Here the page is parsed once, the parts that
are never text (scripts, styles, comments, hidden elements) are cut out of the tree in C,
and readability gets the tree; its choice comes back as an element. readability mutates the
tree it scores, so its second, less ruthless pass (for pages where the first found too little)
asks for a fresh tree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import lxml.etree
import lxml.html
from readability import Document
from readability.readability import REGEXES

__all__ = ["parse_page", "readable_article"]

# Element classes are looked up in C: every element is an HtmlElement (lxml.html's default
# lookup runs Python code for each element the scoring touches).
_PARSER = lxml.html.HTMLParser(remove_comments=True, remove_pis=True)
_PARSER.set_element_class_lookup(lxml.etree.ElementDefaultClassLookup(element=lxml.html.HtmlElement))

# Never part of an article's text.
_NEVER_TEXT = (
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
_WITH_HIDDEN = lxml.etree.XPath("//*[@hidden]")
_WITH_STYLE = lxml.etree.XPath("//*[@style]")
_HIDDEN_STYLE = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)", re.IGNORECASE
)


# A block that opens with one of these labels lists other stories or readers' comments.
_LABEL = re.compile(
    r"(?:相关|延伸|推荐|热门|热点|精彩|更多|最新|网友|读者|热|全部)?"
    r"(?:新闻|阅读|文章|推荐|报道|链接|专题|评论|留言|跟帖|回复|排行|资讯|图片|视频)(?:推荐|排行|榜)?"
    r"|猜你喜欢|评论|我要评论|发表评论|大家都在看|为你推荐"
    r"|(?:related|recommended|more|popular|trending|most read)(?: (?:stories|articles|news|posts|coverage|content|from .{1,30}))?"
    r"|comments?|you (?:may|might) also like|read more|read next",
    re.IGNORECASE,
)
# A character or word that every label above holds: a cheap test before the full one.
_LABEL_HINT = re.compile(r"[关荐热评留帖复读排多猜看延闻章道链题讯图视]")
_LABEL_HINT_LATIN = re.compile(r"elated|ecommend|ore|opular|rending|ead|omment|ike", re.IGNORECASE)
_LABEL_TRIM = "()（）[]【】「」:：0123456789 \t\r\n\xa0\u3000|>›»"
_LONG_TEXT = 150  # a block holding a run of text this long may be the body: never taken out by its label
_LONG_BLOCK = 1000  # nor one with this much text, most of it outside links


def parse_page(html: str) -> Any:
    """The page as an lxml.html tree without the parts that are never text: scripts, styles,
    hidden elements, <nav>, and the blocks labelled as related stories or comments."""
    root = lxml.html.document_fromstring(html, parser=_PARSER)
    lxml.etree.strip_elements(root, *_NEVER_TEXT, "nav", with_tail=False)
    hidden = [*_WITH_HIDDEN(root), *(e for e in _WITH_STYLE(root) if _hidden_style(e.get("style")))]
    for element in hidden:
        if element.getparent() is not None:
            element.drop_tree()
    for block in _labelled_blocks(root):
        if block.getparent() is not None:
            block.drop_tree()
    return root


def _labelled_blocks(root: Any) -> list:
    """Blocks that open with a label such as 相关新闻 or 网友评论: the largest element whose
    first text is the label, unless it holds a long run of text (it may be the article)."""
    blocks = []
    for element in root.iter():
        text = element.text
        if (
            not text
            or len(text) > 40
            or not (_LABEL_HINT.search(text) or (text.isascii() and _LABEL_HINT_LATIN.search(text)))
        ):
            continue
        label = text.strip(_LABEL_TRIM)
        if not _LABEL.fullmatch(label):
            continue
        block = None
        while element is not None and element.tag not in ("body", "html") and _first_text(element) == text:
            block = element
            element = element.getparent()
        if block is not None and block.tag not in _INLINE and not _may_hold_article(block):
            blocks.append(block)
    return blocks


def _first_text(element: Any) -> Any:
    for text in element.itertext():
        if text.strip():
            return text
    return None


def _may_hold_article(element: Any) -> bool:
    """The page's headline, a long run of text, or much text outside links: the label may
    head a whole column."""
    if next(element.iter("h1"), None) is not None or any(
        len(text.strip()) >= _LONG_TEXT for text in element.itertext()
    ):
        return True
    length = _length(element.text_content())
    return length > _LONG_BLOCK and _length(" ".join(_LINK_TEXTS(element))) < 0.5 * length


_BLOCK_TAGS = ("blockquote", "dl", "div", "img", "ol", "p", "pre", "table", "ul", "param", "picture", "progress")
_BLOCK_SET = frozenset(_BLOCK_TAGS)
_LINK_TEXTS = lxml.etree.XPath(".//a//text()", smart_strings=False)
_NAMED = lxml.etree.XPath("//*[@class or @id]")
_INLINE = frozenset(["a", "b", "cite", "code", "em", "font", "i", "small", "span", "strong", "sub", "sup", "u"])


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _pauses(text: str) -> int:
    return text.count(",") + text.count("，")


def _length(text: str) -> int:
    """Length with white space runs counted as one character (readability's ``clean``, in C)."""
    return len(" ".join(text.split()))


class _TreeDocument(Document):
    """readability's Document on a given tree; ``article`` is its choice, as an element.

    Three of readability's steps are done here with the same rules in fewer Python calls
    (they took most of its time on real pages): taking out unlikely candidates, turning
    <div>s without blocks into paragraphs (readability serializes every <div>'s children to
    look for block tags), and link density.

    Two are done with rules that read Chinese too: scoring paragraphs and the final clean-up
    of the chosen block. readability scores a paragraph by its ASCII commas and its length,
    and keeps a block without questions when it holds ten commas. Chinese text writes "，"
    and says in one character what English says in two or three, so a Chinese body scored
    like menu text and lost to any English or Latin paragraph beside it. Here "，" counts as
    a comma and a CJK character counts twice towards length (and towards the 25 characters
    below which readability does not count a paragraph at all).
    """

    def __init__(self, tree: Any, fresh_tree: Callable[[], Any]) -> None:
        super().__init__(tree)
        self._fresh_tree = fresh_tree
        self._given = True
        self.article: Any = None

    def _parse(self, input: Any) -> Any:
        if self._given:
            self._given = False
            return input
        return self._fresh_tree()  # the second pass: the first one changed the tree

    def remove_unlikely_candidates(self) -> None:
        unlikely = _UNLIKELY
        for element in _NAMED(self.html):
            names = f"{element.get('class', '')} {element.get('id', '')}"
            found = unlikely.get(names)
            if found is None:
                found = unlikely[names] = _unlikely(names)
            if (
                found
                and element.tag not in ("html", "body")
                and element.tag not in ("pre", "code")
                and next(element.iterancestors("pre", "code"), None) is None
                and next(element.iter("main", "article", "math"), None) is None
            ):
                element.drop_tree()

    def transform_misused_divs_into_paragraphs(self) -> None:
        holds_block = _holding_blocks(self.html)
        for div in list(self.html.iter("div")):
            if not any(child in holds_block or _is_block(child) for child in div):
                div.tag = "p"
        for div in list(self.html.iter("div")):
            _wrap_loose_text(div, holds_block)

    def get_link_density(self, elem: Any) -> float:
        """Link text over all text, white space left out (readability counts runs of it as one
        character: the same share within a few characters)."""
        linked = _solid_length("".join(_LINK_TEXTS(elem)))
        return linked / max(_solid_length(elem.text_content()), 1)

    def score_paragraphs(self) -> dict:
        candidates: dict = {}
        for paragraph in self.html.iter("p", "pre", "td", "blockquote"):
            parent = paragraph.getparent()
            if parent is None:
                continue
            text = " ".join(paragraph.text_content().split())
            weighted = len(text) + len(_CJK.findall(text))
            if weighted < self.min_text_length:
                continue
            score = 1 + _pauses(text) + 1 + min(weighted / 100, 3)
            for node, share in ((parent, 1.0), (parent.getparent(), 0.5)):
                if node is None:
                    continue
                if node not in candidates:
                    candidates[node] = self.score_node(node)
                candidates[node]["content_score"] += score * share
        for node, candidate in candidates.items():
            candidate["content_score"] *= 1 - self.get_link_density(node)
        return candidates

    def sanitize(self, node: Any, candidates: dict, keep_all_images: bool = False) -> str:
        for header in list(node.iter("h1", "h2", "h3", "h4", "h5", "h6")):
            if self.class_weight(header) < 0 or self.get_link_density(header) > 0.33:
                header.drop_tree()
        call_to_action = REGEXES["callToActionRe"]
        for paragraph in list(node.iter("p")):
            if call_to_action.search(paragraph.text_content()) and self.get_link_density(paragraph) > 0.2:
                paragraph.drop_tree()
        for element in list(node.iter("form", "textarea", "iframe")):
            element.drop_tree()
        allowed = self.get_preserved_elements(node)
        for tag in ("table", "ul", "div", "aside", "header", "footer", "section"):
            for element in reversed(node.findall(f".//{tag}")):
                if element not in allowed and self._clutter(element, candidates):
                    element.drop_tree()
        self.html = node
        return self.get_clean_html()

    def _clutter(self, element: Any, candidates: dict) -> bool:
        """readability's rules for a block inside the chosen one: a negative weight, or,
        unless it holds ten commas (ASCII or Chinese), too many images, list items, inputs
        or links for its text."""
        weight = self.class_weight(element)
        score = candidates[element]["content_score"] if element in candidates else 0
        if weight + score < 0:
            return True
        text = element.text_content()
        if _pauses(text) >= 10:
            return False
        paragraphs = len(element.findall(".//p"))
        images = len(element.findall(".//img"))
        items = len(element.findall(".//li")) - 100
        inputs = len(element.findall(".//input")) - len(element.findall('.//input[@type="hidden"]'))
        embeds = len(element.findall(".//embed"))
        length = _length(text)
        density = self.get_link_density(element)
        in_article = (
            element.tag in ("ul", "section") and next(element.iterancestors("main", "article"), None) is not None
        )
        return bool(
            (paragraphs and images > 1 + paragraphs * 1.3)
            or (items > paragraphs and element.tag not in ("ol", "ul"))
            or inputs > paragraphs / 3
            or (length < self.min_text_length and (images == 0 or images > 2))
            or (weight < 25 and density > (0.25 if in_article else 0.2))
            or (weight >= 25 and density > 0.5)
            or (embeds == 1 and length < 75)
            or embeds > 1
            or not length
        )

    def get_clean_html(self) -> str:
        self.article = self.html
        return lxml.html.tostring(self.html, encoding="unicode")


_UNLIKELY: dict[str, bool] = {}  # readability's verdict on a class and id (pages repeat them)


def _unlikely(names: str) -> bool:
    """readability's test of an element's class and id."""
    if len(_UNLIKELY) > 50_000:
        _UNLIKELY.clear()
    return (
        len(names) >= 2
        and REGEXES["unlikelyCandidatesRe"].search(names) is not None
        and REGEXES["okMaybeItsACandidateRe"].search(names) is None
    )


@functools.lru_cache(maxsize=4096)
def _hidden_style(style: str) -> bool:
    return _HIDDEN_STYLE.search(style) is not None


def _solid_length(text: str) -> int:
    return len(text) - sum(map(text.count, (" ", "\n", "\t", "\r", "\xa0", "\u3000")))


def _is_block(element: Any) -> bool:
    return element.tag in _BLOCK_SET


def _holding_blocks(root: Any) -> set:
    """Every element with a block element (as readability counts them) below it."""
    holding: set = set()
    for element in root.iter(*_BLOCK_TAGS):
        for ancestor in element.iterancestors():
            if ancestor in holding:
                break
            holding.add(ancestor)
    return holding


def _wrap_loose_text(div: Any, holds_block: set) -> None:
    """readability's second step for a <div> with blocks: its loose text and runs of inline
    children become paragraphs of their own, <br>s go."""
    paragraph = None
    if div.text and div.text.strip():
        paragraph = div.makeelement("p")
        paragraph.text, div.text = div.text, None
        div.insert(0, paragraph)
    for child in list(div):
        if child is paragraph:
            continue
        if child.tag == "br" or child.tag not in _INLINE or child in holds_block:
            paragraph = None
            continue
        if paragraph is None:
            paragraph = div.makeelement("p")
            child.addprevious(paragraph)
        paragraph.append(child)
    for position, child in reversed(list(enumerate(div))):
        if child.tail and child.tail.strip():
            paragraph = div.makeelement("p")
            paragraph.text, child.tail = child.tail, None
            div.insert(position + 1, paragraph)
        if child.tag == "br":
            child.drop_tree()


def readable_article(tree: Any, fresh_tree: Callable[[], Any]) -> Any:
    """readability's article element of ``tree`` (which it changes), or None where it finds none.

    ``fresh_tree`` gives the same page again, for readability's second pass.
    """
    document = _TreeDocument(tree, fresh_tree)
    document.summary(html_partial=True)
    return document.article
