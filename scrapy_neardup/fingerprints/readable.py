"""readability-lxml run on a tree that was parsed once.

readability parses the page itself, cleans a deep copy of it, serializes its choice to a
string, and the caller parses that string again. Here the page is parsed once, the parts that
are never text (scripts, styles, comments, hidden elements) are cut out of the tree in C,
and readability gets the tree; its choice comes back as an element. readability mutates the
tree it scores, so its second, less ruthless pass (for pages where the first found too little)
asks for a fresh tree.

Where the C module ``_pagewalk`` is built, the walks over the whole page (hidden elements,
labels, readability's unlikely candidates, its <div>-to-paragraph rules and its paragraph
scores) are made in C in two reads of the tree, with readability's rules as this module gives
them; the tree is changed only where later steps look (the elements taken out, and the
paragraphs of the region that becomes the article). Without it, the same rules run in Python.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Container
from typing import Any

import lxml.etree
import lxml.html
from readability import Document
from readability.readability import REGEXES

from . import pagewalk
from .article_end import cut_at_trailing_label, opening_post
from .headline_script import CJK_SAMPLE, cjk_count, cjk_share
from .markup import EMPTIED_TAGS, NEVER_TEXT, lighter_markup
from .pagewalk import LABEL_HINT_CHARS, LABEL_HINT_WORDS
from .shallow import shallow_html

__all__ = ["drop_unseen", "parse_page", "readable_article"]

# Element classes are looked up in C: every element is an HtmlElement (lxml.html's default
# lookup runs Python code for each element the scoring touches). Nothing looks elements up by
# id, so the parser keeps no table of ids.
_PARSER = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, collect_ids=False)
_PARSER.set_element_class_lookup(lxml.etree.ElementDefaultClassLookup(element=lxml.html.HtmlElement))

# libxml2's message when a page nests more elements than it parses (the rest of the page is lost).
_TOO_DEEP = "Excessive depth"

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
_LABEL_HINT = re.compile(f"[{LABEL_HINT_CHARS}]")
_LABEL_HINT_LATIN = re.compile("|".join(LABEL_HINT_WORDS), re.IGNORECASE)
_LABEL_TRIM = "()（）[]【】「」:：0123456789 \t\r\n\xa0\u3000|>›»"
_LONG_TEXT = 150  # a block holding a run of text this long may be the body: never taken out by its label
_LONG_BLOCK = 1000  # nor one with this much text, most of it outside links


def parse_page(html: str) -> Any:
    """The page as an lxml.html tree without the parts that are never text: scripts, styles,
    hidden elements, <nav>, the blocks labelled as related stories or comments, and a Chinese
    site's footer (:func:`_drop_site_footer`). lxml parses the page's markup without what
    extraction never reads (:mod:`.markup`). A page nested deeper than the parser goes is
    parsed again made shallow (:mod:`.shallow`)."""
    markup = lighter_markup(html)
    root = lxml.html.document_fromstring(markup, parser=_PARSER)
    if any(_TOO_DEEP in error.message for error in _PARSER.error_log):
        root = lxml.html.document_fromstring(shallow_html(html), parser=_PARSER)
    drop_unseen(root)
    if pagewalk.walker is not None:
        labelled = pagewalk.walker.labelled(root, _is_label, _LONG_TEXT, _LONG_BLOCK)
    else:
        labelled = _labelled_blocks(root)
    for block in labelled:
        if block.getparent() is not None and not _heads_siblings(block):
            block.drop_tree()
    _drop_site_footer(root, html, markup.count("\n"))
    _join_short_lines(root)
    return root


def drop_unseen(root: Any) -> None:
    """Take out of ``root`` what a reader never sees, with all it holds: the elements that are
    never text (:data:`.markup.EMPTIED_TAGS`) and the hidden ones (a ``hidden`` attribute, a
    ``display: none`` or ``visibility: hidden`` style)."""
    lxml.etree.strip_elements(root, *EMPTIED_TAGS, with_tail=False)
    hidden, styled = (
        pagewalk.walker.hidden(root) if pagewalk.walker is not None else (_WITH_HIDDEN(root), _WITH_STYLE(root))
    )
    for element in [*hidden, *(e for e in styled if _hidden_style(e.get("style")))]:
        if element.getparent() is not None:
            element.drop_tree()


# A Chinese site's registration number (ICP备 / ICP证), which the law has it show in its footer.
_REGISTRATION = re.compile(r"ICP[备证][^\d]{0,3}\d")
_FOOTER_MOST = 300  # the most text a footer block holds (white space left out)


def _drop_site_footer(root: Any, html: str, lines: int) -> None:
    """Take out the block that shows a site's registration number (its footer, with the
    copyright, licences and a telephone number for reports): prose with commas, which on a
    short story lifted the whole page above it. The footer is the page's last mention of
    "ICP", found in the markup and then by its line in the tree: searching every text of the
    tree cost a fifth of a page's time. Only a block that reads as a footer goes; a block's text
    is made only once it is known to be short (the blocks around a footer hold the page). ``lines`` is
    the page's count of line breaks (the lighter markup keeps every one, in fewer characters):
    the line of "ICP" is counted back from the end, past the footer only."""
    at = html.rfind("ICP")
    if at < 0:
        return
    block = _last_element_by_line(root, lines - html.count("\n", at) + 1)
    while block is not None and block.tag not in ("body", "html"):
        if not _solid_at_most(block, _FOOTER_MOST):
            return
        text = block.text_content()
        if block.tag not in _INLINE and _REGISTRATION.search(text):
            if "。" not in text:  # no sentence: not a story's block that holds the footer line
                block.drop_tree()
            return
        block = block.getparent()


def _last_element_by_line(root: Any, line: int) -> Any:
    """The last element that starts on or before ``line`` of the markup, found by going down
    from <body> through the last child starting there (the footer is near the end)."""
    element = root.find("body")
    while element is not None:
        child = next((c for c in reversed(element) if isinstance(c.tag, str) and (c.sourceline or 0) <= line), None)
        if child is None:
            return element
        element = child
    return None


_SHORT_LINE = 25  # readability's least paragraph length
_SHORT_RUN = 3  # lines in a run


def _join_short_lines(root: Any) -> None:
    """Runs of short paragraphs without links (a poem's lines, a list of names and dates)
    become one paragraph, the lines kept apart by <br>s. readability does not count a
    paragraph under 25 characters, so a story told in short lines scored nothing and lost to
    a newsletter box or an author's bio."""
    runs: list[list] = []
    previous = None
    for paragraph in _short_paragraphs(root):
        if previous is not None and paragraph.getprevious() is previous and not (previous.tail or "").strip():
            runs[-1].append(paragraph)
        else:
            runs.append([paragraph])
        previous = paragraph
    for run in runs:
        if len(run) < _SHORT_RUN:
            continue
        first = run[0]
        for paragraph in run[1:]:
            line_break = first.makeelement("br")
            line_break.tail = paragraph.text
            first.append(line_break)
            first.tail = paragraph.tail
            paragraph.getparent().remove(paragraph)


def _short_paragraphs(root: Any) -> list:
    """The <p>s that hold text only (no markup inside: links, pictures) and are too short
    for readability to count."""
    if pagewalk.walker is not None:
        return pagewalk.walker.short_paragraphs(root, _SHORT_LINE)
    return [p for p in root.iter("p") if not len(p) and p.text and not _weighs(p.text, _SHORT_LINE)]


def _heads_siblings(block: Any) -> bool:
    """A label that stands alone before the list it heads stays, so that the list can be cut
    with it where readability's choice takes it in (:mod:`.article_end`)."""
    return block.getnext() is not None and _solid_at_most(block, 40)


def _solid_at_most(element: Any, most: int) -> bool:
    """Has the text below ``element`` at most ``most`` characters that are not white space?
    (Counted in C until passed: a labelled block may be a long list.)"""
    if pagewalk.walker is not None:
        return pagewalk.walker.solid_length(element, most) <= most
    return _solid_length(element.text_content()) <= most


@functools.lru_cache(maxsize=4096)
def _is_label(text: str) -> bool:
    """(Kept for the texts seen: a site's pages repeat their labels and menus.)"""
    return _LABEL.fullmatch(text.strip(_LABEL_TRIM)) is not None


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
        if not _is_label(text):
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


# readability finds block elements in a <div>'s markup with "<(blockquote|dl|div|img|ol|p|pre|table|ul)":
# every tag whose name starts so (<param>, <picture> and <progress> too).
_BLOCK_STARTS = ("blockquote", "dl", "div", "img", "ol", "p", "table", "ul")
_LINK_TEXTS = lxml.etree.XPath(".//a//text()", smart_strings=False)
_NAMED = lxml.etree.XPath("//*[@class or @id]")
_INLINE = frozenset(["a", "b", "cite", "code", "em", "font", "i", "small", "span", "strong", "sub", "sup", "u"])


def _pauses(text: str) -> int:
    return text.count(",") + text.count("，")


def _weighs(text: str, least: int) -> bool:
    """Is readability's length of ``text``, CJK characters counted twice (as
    ``score_paragraphs``), at least ``least``? CJK characters are counted only when needed."""
    text = " ".join(text.split())
    return len(text) >= least or len(text) + cjk_count(text) >= least


def _length(text: str) -> int:
    """Length with white space runs counted as one character (readability's ``clean``, in C)."""
    return len(" ".join(text.split()))


def _text_start(element: Any, most: int) -> str:
    """The first ``most`` characters of the text below ``element``; in C where the module is
    built (the rest of the text is not made)."""
    if pagewalk.walker is not None:
        return pagewalk.walker.text_start(element, most)
    return element.text_content()[:most]


def _linked_solid_length(element: Any) -> int:
    """The characters of the text inside the links below ``element`` that are not white
    space; in C where the module is built (the texts are not made)."""
    if pagewalk.walker is not None:
        return pagewalk.walker.linked_solid_length(element)
    return _solid_length("".join(_LINK_TEXTS(element)))


def _measures(element: Any) -> tuple[int, int, int, int]:
    """The text below ``element`` (``text_content()``) measured: its :func:`_length`, its
    CJK characters, its pauses and its characters that are not white space; in C where the
    module is built (the text is not made)."""
    if pagewalk.walker is not None:
        return pagewalk.walker.measures(element)
    text = element.text_content()
    return _length(text), cjk_count(text), _pauses(text), _solid_length(text)


_NEARLY_ALL = 0.9  # of the chosen block's text: a block inside it holding this much is the story
_FEW_CHARS = 100  # weighted characters: a block with fewer is a box beside a story, not one


def _holding_text(ranked: list) -> dict:
    """The highest score, unless it holds only a few words (a newsletter box, an author's
    line, whose class names "article" or "content") and a block with at least half its score
    holds text: a short story told in short lines scores little and loses to such a box."""
    best = ranked[0]
    if _holds_text(best["elem"]):
        return best
    for candidate in ranked[1:]:
        if candidate["content_score"] < 0.5 * best["content_score"]:
            break
        if _holds_text(candidate["elem"]):
            return candidate
    return best


_LATIN = 0.1  # a block with less CJK than this is Latin text
_CJK_BLOCK = 0.3  # one with at least this much is written in CJK
_SCRIPT_SCORE = 0.2  # of the Latin block's score: a CJK block scoring less is not taken for it


def _in_headline_script(ranked: list, best: dict) -> dict:
    """On a page whose headline is CJK, a block of Latin text (an author's bio, a list of
    sources) gives way to the best block written in CJK that holds text and scores at least
    a fifth of it (:mod:`.headline_script`)."""
    if cjk_share(_text_start(best["elem"], CJK_SAMPLE)) >= _LATIN:
        return best
    for candidate in ranked:
        if candidate["content_score"] < _SCRIPT_SCORE * best["content_score"]:
            break
        text = candidate["elem"].text_content()
        if cjk_share(text) >= _CJK_BLOCK and _weighs(text, _FEW_CHARS):
            return candidate
    return best


def _holds_text(element: Any) -> bool:
    length, cjk, _, _ = _measures(element)  # _weighs of its text
    return length >= _FEW_CHARS or length + cjk >= _FEW_CHARS


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

    def __init__(self, tree: Any, fresh_tree: Callable[[], Any], cjk_headline: bool = False) -> None:
        super().__init__(tree)
        self._fresh_tree = fresh_tree
        self._cjk_headline = cjk_headline
        self._given = True
        self.article: Any = None
        self._article_length = 0  # of the block being cleaned up (sanitize)

    def tags(self, node: Any, *tag_names: str) -> Any:
        """readability's search of the whole tree for tags; :func:`parse_page` took scripts
        and styles out already, so readability's own walk for them is not made. Its search
        for <body> (to mark it) takes the page's <body> where it is a child of <html>: the
        parser keeps a single <body> (it drops every later <body> tag), so there is no other
        to find."""
        if set(tag_names) <= _TAKEN_OUT:
            return iter(())
        if tag_names == ("body",):
            body = node.find("body")
            if body is not None:
                return iter((body,))
        return super().tags(node, *tag_names)

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
        return _linked_solid_length(elem) / max(_measures(elem)[3], 1)

    def score_paragraphs(self) -> dict:
        candidates: dict = {}
        for paragraph in self.html.iter("p", "pre", "td", "blockquote"):
            parent = paragraph.getparent()
            if parent is None:
                continue
            text = " ".join(paragraph.text_content().split())
            weighted = len(text) + cjk_count(text)
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

    def select_best_candidate(self, candidates: dict) -> Any:
        """readability's choice: the highest score (of a block holding text: :func:`_holding_text`),
        unless a block marked as the article body
        (itemprop="articleBody", few links) or an <article> inside the choice with a quarter
        of its score and 250 characters is there (readability lists every descendant of its
        choice to find the latter, and formats a debug line for the top five). On a thread's
        page the first post stands in for a reply (:func:`.article_end.opening_post`), and the
        replies are no candidates, which readability would add beside it."""
        if not candidates:
            return None
        ranked = sorted(candidates.values(), key=lambda candidate: candidate["content_score"], reverse=True)
        best = _holding_text(ranked)
        if self._cjk_headline:
            best = _in_headline_script(ranked, best)
        for candidate in ranked:
            element = candidate["elem"]
            if "articleBody" in (element.get("itemprop") or "").split() and self.get_link_density(element) <= 0.1:
                best = candidate
                break
        best_element, replies = opening_post(best["elem"])  # a thread's first post, not its longest reply
        if best_element is not best["elem"]:
            best = candidates.get(best_element) or {"content_score": best["content_score"], "elem": best_element}
        for reply in replies:
            candidates.pop(reply, None)  # readability would add it beside the first post
        for candidate in ranked:
            element = candidate["elem"]
            if (
                element.tag == "article"
                and element is not best_element
                and any(ancestor is best_element for ancestor in element.iterancestors())
                and _measures(element)[0] >= 250
                and candidate["content_score"] >= best["content_score"] * 0.25
            ):
                return candidate
        return best

    def get_semantic_article_candidate(self, candidates: dict, best_candidate: dict) -> dict:
        """readability looks for an <article> to stand in for a choice inside a <form>, an
        <aside> or a <nav>; whether it is inside one is asked of the tags, not of an XPath
        compiled at each call."""
        element = best_candidate["elem"]
        if element.tag not in _FRAMES and next(element.iterancestors(*_FRAMES), None) is None:
            return best_candidate
        return super().get_semantic_article_candidate(candidates, best_candidate)

    def merge_article_segments(self, candidates: dict, best_candidate: dict, score_threshold: float) -> None:
        """readability adds to its choice the blocks like it elsewhere on the page: candidates
        of its tag outside its parent, scoring at least 10 or an <article>. It looks for them
        from each of the choice's ancestors in turn, over every candidate; it is handed only
        the candidates that may be one (it reads no other), and not asked where there is none."""
        best = best_candidate["elem"]
        segments = {
            element: candidate for element, candidate in candidates.items() if _may_be_segment(element, candidate, best)
        }
        if segments:
            super().merge_article_segments(segments, best_candidate, score_threshold)

    def get_preserved_elements(self, node: Any) -> dict:
        """readability's blocks that its clean-up keeps: tables of contents, and the lead of a
        quote (a block followed by one holding a <blockquote>; readability asks it of every
        <div> and <section> and each of their ancestors). In an article apart from the page
        without a <blockquote>, no block is followed by one."""
        if node.getparent() is None and next(node.iter("blockquote"), None) is None:
            return {element: True for element in self.tags(node, "ul") if self.is_toc_list(element)}
        return super().get_preserved_elements(node)

    def sanitize(self, node: Any, candidates: dict, keep_all_images: bool = False) -> str:
        cut_at_trailing_label(node)  # before the clean-up weighs blocks against the article's length
        for header in list(node.iter("h1", "h2", "h3", "h4", "h5", "h6")):
            if self.class_weight(header) < 0 or self.get_link_density(header) > 0.33:
                header.drop_tree()
        call_to_action = REGEXES["callToActionRe"]
        if _may_call_to_action(node.text_content()):
            for paragraph in list(node.iter("p")):
                if call_to_action.search(paragraph.text_content()) and self.get_link_density(paragraph) > 0.2:
                    paragraph.drop_tree()
        for element in list(node.iter("form", "textarea", "iframe")):
            element.drop_tree()
        allowed = self.get_preserved_elements(node)
        self._article_length = _measures(node)[0]
        for tag in ("table", "ul", "div", "aside", "header", "footer", "section"):
            for element in reversed(node.findall(f".//{tag}")):
                if element not in allowed and self._clutter(element, candidates):
                    element.drop_tree()
        self.html = node
        return self.get_clean_html()

    def _clutter(self, element: Any, candidates: dict) -> bool:
        """readability's rules for a block inside the chosen one, unless it holds nearly all
        of the article's text with links in under half of it (the story in a box whose class
        says "widget"): a negative weight, or, unless it holds ten commas (ASCII or Chinese) or
        most of the article's text with few links, too many images, list items, inputs or
        links for its text."""
        weight = self.class_weight(element)
        score = candidates[element]["content_score"] if element in candidates else 0
        if weight + score < 0:
            # unless it is the article itself, in a box whose class says "widget"
            nearly_all = _measures(element)[0] >= _NEARLY_ALL * self._article_length
            return not nearly_all or self.get_link_density(element) > 0.5
        length, _, pauses, _ = _measures(element)
        if pauses >= 10:
            return False
        density = self.get_link_density(element)
        if 2 * length > self._article_length and density <= 0.5:
            return False  # most of the article (a short story beside a few links): taking it out empties it
        counts = _descendant_counts(element)
        paragraphs, images, embeds = counts["p"], counts["img"], counts["embed"]
        items = counts["li"] - 100
        inputs = counts["input"]
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
        """readability only measures the markup it returns (under ``retry_length`` it tries
        again, less ruthless); the caller takes :attr:`article`. The markup is never shorter
        than the text in it, so it is made only when the text is short."""
        self.article = self.html
        text = self.html.text_content()
        if len(text) >= self.retry_length:
            return text
        return lxml.html.tostring(self.html, encoding="unicode")


_SEGMENT_SCORE = 10  # the least score of a segment readability adds to its choice


def _may_be_segment(element: Any, candidate: dict, best: Any) -> bool:
    """May readability add ``element`` to its choice ``best`` as a segment of the article?
    Only a candidate of its tag outside its parent, scoring at least 10, or an <article>."""
    return (
        element is not best
        and element.tag == best.tag
        and (candidate["content_score"] >= _SEGMENT_SCORE or element.tag == "article")
        and element.getparent() is not best.getparent()
    )


_FRAMES = ("form", "aside", "nav")  # a choice inside one may give way to an <article>
_COUNTED = ("p", "img", "li", "input", "embed")


def _descendant_counts(element: Any) -> dict[str, int]:
    """readability's counts of <p>, <img>, <li>, <input> (hidden ones left out) and <embed>
    below ``element``, in one walk instead of one search each."""
    counts = dict.fromkeys(_COUNTED, 0)
    for below in element.iterdescendants(*_COUNTED):
        if below.tag != "input" or below.get("type") != "hidden":
            counts[below.tag] += 1
    return counts


def _anywhere(pattern: re.Pattern) -> re.Pattern | None:
    """``pattern`` (``^\\s*`` then words) without its anchor: where it finds nothing in a
    block's text, no paragraph of the block starts with the words. None for another shape."""
    head = "^\\s*"
    if not pattern.pattern.startswith(head):
        return None
    return re.compile(pattern.pattern[len(head) :], pattern.flags)


_CALL_TO_ACTION_ANYWHERE = _anywhere(REGEXES["callToActionRe"])

# Letters that a case-blind regex also matches with a character outside ASCII (ı and İ for i,
# ſ for s, the Kelvin sign for k).
_FOLDING = re.compile("[iks]+")


def _ascii_cores(pattern: re.Pattern | None) -> tuple[bytes, ...] | None:
    """For ``pattern`` of the shape ``(?:word|word ...)\\b`` (words of ASCII letters and
    spaces), each word's longest part without :data:`_FOLDING`'s letters: only ASCII characters
    match it, so a text where the pattern finds a word holds its part, in some case. None for
    another shape."""
    if pattern is None or not (pattern.pattern.startswith("(?:") and pattern.pattern.endswith(")\\b")):
        return None
    words = pattern.pattern[3:-3].split("|")
    if not all(re.fullmatch("[a-z ]+", word) for word in words):
        return None
    return tuple(max(_FOLDING.split(word), key=len).encode() for word in words)


_CALL_TO_ACTION_CORES = _ascii_cores(_CALL_TO_ACTION_ANYWHERE)


def _may_call_to_action(text: str) -> bool:
    """May a paragraph of a block with the text ``text`` start with readability's call to
    action (sign up, subscribe...)? A case-blind regex reads CJK text slowly, character by
    character, so its words are first looked for as bytes in the text's ASCII characters."""
    if _CALL_TO_ACTION_ANYWHERE is None:
        return True
    if _CALL_TO_ACTION_CORES is not None:
        ascii_text = text.encode("ascii", "ignore").lower()
        if not any(core in ascii_text for core in _CALL_TO_ACTION_CORES):
            return False
    return _CALL_TO_ACTION_ANYWHERE.search(text) is not None


_TAKEN_OUT = frozenset(NEVER_TEXT)  # by parse_page: readability's tags() need not look for them


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
    """Characters that are not white space."""
    return sum(map(len, text.split()))


def _is_block(element: Any) -> bool:
    tag = element.tag
    return isinstance(tag, str) and tag.startswith(_BLOCK_STARTS)


def _holding_blocks(root: Any) -> set:
    """Every element with a block element (as readability counts them) below it."""
    holding: set = set()
    for element in root.iter():
        if not _is_block(element):
            continue
        for ancestor in element.iterancestors():
            if ancestor in holding:
                break
            holding.add(ancestor)
    return holding


def _wrap_loose_text(div: Any, holds_block: Container) -> None:
    """readability's second step for a <div> with blocks: its loose text and runs of inline
    children become paragraphs of their own, <br>s go. (Most <div>s holding blocks have none:
    the C walks say so first.)"""
    if pagewalk.walker is not None and not pagewalk.walker.loose_parts(div):
        return
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


class _WalkedDocument(_TreeDocument):
    """:class:`_TreeDocument` with readability's walks over the whole page made in C.

    One read of the tree gives readability's unlikely candidates (with its ruthless pass)
    and the scores of its candidates as if its <div>s had been turned into paragraphs; the
    candidates found unlikely are then taken out. readability turns <div>s into paragraphs
    all over the page before it scores; only the region that can become the article needs
    it: the children of the chosen block's parent (readability looks at the choice's
    siblings, <p>s among them) and, once the article is put together, the article.
    """

    _scored: dict | None = None  # the ruthless pass's scores, from the walk that found the unlikely candidates

    def remove_unlikely_candidates(self) -> None:
        self._scored = self._walk(ruthless=True)

    def transform_misused_divs_into_paragraphs(self) -> None:
        """Done region by region: :meth:`get_article` and :meth:`sanitize`."""

    def score_paragraphs(self) -> dict:
        scored, self._scored = self._scored, None
        return scored if scored is not None else self._walk(ruthless=False)

    def _walk(self, ruthless: bool) -> dict:
        dropped, scored = pagewalk.walker.score(self.html, ruthless, self.min_text_length)
        for element in dropped:
            element.drop_tree()
        return {element: {"content_score": score, "elem": element} for element, score in scored}

    def get_article(self, candidates: dict, best_candidate: dict, html_partial: bool = False) -> Any:
        """Before readability puts the article together, the places it takes elements from
        are turned into paragraphs as readability would have: the choice and its siblings,
        and, where it may merge segments of the article, the parents of the blocks it may
        add (:func:`_may_be_segment`; a moved element leaves its loose tail behind, as a
        paragraph)."""
        best = best_candidate["elem"]
        self._turned: set = set()
        self._turn(best.getparent())
        self._turn(best)
        if _may_merge_segments(best):
            for element, candidate in candidates.items():
                if _may_be_segment(element, candidate, best):
                    parent = element.getparent()
                    self._turn(parent)
                    self._turn(parent.getparent() if parent is not None else None)
        return _into_page(self.html, super().get_article(candidates, best_candidate, html_partial))

    def get_editorial_leads(self, best_elem: Any) -> list:
        leads = super().get_editorial_leads(best_elem)
        for lead in leads:
            self._turn(lead.getparent())
        return leads

    def _turn(self, element: Any) -> None:
        if element is not None and element not in self._turned:
            self._turned.add(element)
            _turn_children_into_paragraphs(element)

    def sanitize(self, node: Any, candidates: dict, keep_all_images: bool = False) -> str:
        _divs_into_paragraphs(node)
        return super().sanitize(node, candidates, keep_all_images)


def _into_page(page: Any, article: Any) -> Any:
    """readability puts the article together in a <div> of a document of its own, made by
    lxml.html's default parser, which looks up each element's class in Python; moved back into
    the page's document, its elements are looked up in C."""
    own = page.makeelement("div")
    own.extend(list(article))
    return own


def _may_merge_segments(best: Any) -> bool:
    """readability merges segments of the article into its choice only when the choice has a
    class readability likes, is an <article>, or has a class inside an <article>."""
    classes = (best.get("class") or "").split()
    return (
        best.tag == "article"
        or any(REGEXES["positiveRe"].search(name) for name in classes)
        or (bool(classes) and next(best.iterancestors("article", "main"), None) is not None)
    )


def _turn_children_into_paragraphs(parent: Any) -> None:
    """readability's <div>-to-paragraph rules on ``parent`` and its children only: a child
    <div> without blocks below it becomes a <p>; the loose text of a <div> parent with a block
    child, or a child of any kind with blocks below it, becomes <p>s."""
    if pagewalk.walker is not None:
        plain, holds = pagewalk.walker.child_divs_by_blocks(parent)
        for div in plain:
            div.tag = "p"
        if holds and parent.tag == "div":
            _wrap_loose_text(parent, _HOLDING_BLOCKS)
        return
    holds_block = set()
    for child in parent:
        if child.tag == "div" and not _blocks_below(child):
            child.tag = "p"
        elif _is_block(child) or _blocks_below(child):
            holds_block.add(child)
    if parent.tag == "div" and holds_block:
        _wrap_loose_text(parent, holds_block)


def _blocks_below(element: Any) -> bool:
    return any(_is_block(below) for below in element.iterdescendants())


def _divs_into_paragraphs(root: Any) -> None:
    """readability's <div>-to-paragraph rules below ``root``: a <div> without blocks below it
    becomes a <p>, the loose text of the others becomes <p>s. Renaming a <div> changes
    nothing that holds blocks (a <p> is one too), nor does wrapping loose text (a <div>'s
    inline children move into new <p>s), so the C walk sorts the <div>s in one read of the
    tree and an inline child is asked whether it holds blocks when its turn comes."""
    if pagewalk.walker is not None:
        plain, holding = pagewalk.walker.divs_by_blocks(root)
        for div in plain:
            div.tag = "p"
        for div in holding:
            _wrap_loose_text(div, _HOLDING_BLOCKS)
        return
    holds_block = _holding_blocks(root)
    for div in list(root.iterdescendants("div")):
        if div not in holds_block:
            div.tag = "p"
    for div in list(root.iterdescendants("div")):
        _wrap_loose_text(div, holds_block)


class _HoldingBlocks:
    """The elements with a block element below them, asked of the C walk one at a time."""

    def __contains__(self, element: Any) -> bool:
        return bool(pagewalk.walker.blocks_below(element))


_HOLDING_BLOCKS = _HoldingBlocks()


def readable_article(tree: Any, fresh_tree: Callable[[], Any], cjk_headline: bool = False) -> Any:
    """readability's article element of ``tree`` (which it changes), or None where it finds none.

    ``fresh_tree`` gives the same page again, for readability's second pass; on a page whose
    headline is CJK (``cjk_headline``), a block of Latin text is not taken for the story.
    """
    document = (_WalkedDocument if pagewalk.walker is not None else _TreeDocument)(tree, fresh_tree, cjk_headline)
    document.summary(html_partial=True)
    return document.article
