"""Where an article ends, inside the block readability chose.

readability's choice often runs on past the story: a "相关新闻" list that the template puts
in the same container (its leads are prose, so pruning labelled blocks before scoring keeps
it when it looks like it may hold the article), or, on a blog or forum page, the posts after
the first. Both would let other stories' text into this page's fingerprint, so two pages of
one site would share it. These rules cut the chosen block's text there; what comes before
the cut is never changed. The cut at a label is made before readability's clean-up: the
clean-up weighs each block against the whole choice, and a short story's own box, weighed
against the story and a list of leads, was taken out.

On a thread's page readability may also choose a reply, or the first post with the replies
beside it: the first post is taken instead (``opening_post``, before readability puts the
article together).
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Any

import lxml.etree

__all__ = ["cut_at_trailing_label", "drop_captions", "first_post", "opening_post", "without_repeated_lines"]

# Labels of what follows a story (other stories, readers' comments), never of a part of it.
# Narrower than readable.py's labels: "图片" or "视频" alone can caption a part of the story.
_TRAILING_LABEL = re.compile(
    r"(?:相关|延伸|推荐|热门|热点|精彩|更多|最新)(?:新闻|阅读|文章|推荐|报道|链接|专题|资讯)(?:推荐|排行|榜)?"
    r"|(?:网友|读者)?(?:评论|留言|跟帖)|回复(?:线索|列表)|全部回复|我要评论|发表评论|猜你喜欢|大家都在看|为你推荐"
    r"|(?:related|recommended|more|popular|trending)(?: (?:stories|articles|news|posts|coverage|content))"
    r"|comments?|you (?:may|might) also like|read next",
    re.IGNORECASE,
)
_TRIM = "()（）[]【】「」:：0123456789 \t\r\n\xa0\u3000|>›»"
# Elements short enough to be a label: their text (lxml's text_content is XPath's string())
# measured in C, not read out element by element. Nothing in a link: that is a menu's item
# (a forum's board named 留言), not a label.
_LABEL_LONGEST = 40
_SHORT_ELEMENTS = lxml.etree.XPath(
    f"descendant::*[not(self::a)][not(ancestor::a)][string-length() <= {_LABEL_LONGEST}]"
)
_BEFORE = 50  # characters of the article before the label: a label at its start heads a column
_LINKS_AFTER = 2  # a list of other stories: at least this many links after the label
_SHORT_AFTER = 30  # or no more text than this after it (a comment box's buttons)


def cut_at_trailing_label(article: Any) -> None:
    """Take out, from a label that stands alone (相关新闻, 网友评论, Related stories ...) to
    the end of ``article``, when the article has text before the label and, after it, links
    or only a few words."""
    for label, text in _short_texts(article):
        if not _TRAILING_LABEL.fullmatch(text.strip(_TRIM)):
            continue
        following = _following(label, article)
        around = []  # the elements between the label and the article: their tails follow the label
        for ancestor in label.iterancestors():
            if ancestor is article:
                break
            around.append(ancestor)
        links = sum(1 for element in following for _ in element.iter("a"))
        after = _solid(label) + sum(map(_solid, following)) + sum(_solid_tail(a) for a in around)
        listed = links >= _LINKS_AFTER or after - _solid(label) <= _SHORT_AFTER
        if not listed or _solid(article) - after < _BEFORE:
            continue
        for element in [label, *following]:
            element.getparent().remove(element)  # with its tail: the text after it
        for ancestor in around:
            ancestor.tail = None
        return


def _short_texts(article: Any) -> list:
    """The elements of ``article`` short enough to be a label, each with its text: read in one
    walk by the C module where it is built."""
    from .pagewalk import walker  # readability is imported on first use, not at start-up

    if walker is not None:
        return walker.short_texts(article, _LABEL_LONGEST)
    return [(element, element.text_content()) for element in _SHORT_ELEMENTS(article)]


def _following(label: Any, article: Any) -> list:
    """Every element after ``label`` in ``article``: its later siblings, then those of each
    element around it."""
    after = []
    element = label
    while element is not None and element is not article:
        after.extend(element.itersiblings())
        element = element.getparent()
    return after


def _solid(element: Any) -> int:
    """Characters of text, white space left out (the tail too: it follows the element)."""
    return len("".join(element.text_content().split())) + _solid_tail(element)


def _solid_tail(element: Any) -> int:
    return len("".join((element.tail or "").split()))


# A line that is only a time stamp, as blogs and forums head each post: 2005-03-18 01:58:01.
_STAMP = re.compile(r"(?:\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?)\s*\d{1,2}:\d{2}(?::\d{2})?")
_TITLE = 40  # the line before a post's stamp is its title when at most this long
_FIRST_POST = 100  # characters the first post must hold


def first_post(text: str) -> str:
    """The first post of a text with several, each headed by a line that is only a time stamp
    (a blog's page of entries, a forum thread): the text up to the second stamp and the title
    line before it."""
    lines = text.split("\n")
    # (a stamp holds a colon: the regex is tried on the lines with one, a regex being slow on CJK text)
    stamps = [number for number, line in enumerate(lines) if ":" in line and _STAMP.fullmatch(line.strip())]
    if len(stamps) < 2:
        return text
    end = stamps[1]
    if end - 1 > stamps[0] and len(lines[end - 1]) <= _TITLE:
        end -= 1
    first = "\n".join(lines[:end])
    return first if len("".join(first.split())) >= _FIRST_POST else text


_POST_DEPTH = 4  # levels above readability's choice where a thread's post may begin
POST_TAGS = frozenset(
    ["div", "table", "li", "article", "section", "dl", "tr"]
)  # a post is one of these (markup.py keeps their attributes)
_BEFORE_POSTS = 50  # text of readability's choice before the first post: a thread's title at most


def opening_post(choice: Any) -> tuple[Any, list]:
    """On a thread's page (a forum, a blog's page of entries), the first post, or the element
    of it that stands where ``choice`` stands in a later post, and the later posts; else
    ``choice`` and no posts. readability takes the post with the most text (often a reader's
    long reply), or the first and adds the replies beside it, or the whole thread; the first
    post is what the page publishes (a reprinted story is posted first, the replies are
    readers'). Posts are three or more siblings of one shape (tag and attributes, ids aside)
    holding blocks, most of them a time stamp; the first must hold 100 characters."""
    post = choice
    for _ in range(_POST_DEPTH):  # the choice inside a post, or a post itself
        posts = _posts(post)
        if posts:
            first = choice if posts[0] is post else _at_same_place(posts[0], post, choice)
            return (first, posts[1:]) if first is not None and _held(first) >= _FIRST_POST else (choice, [])
        post = post.getparent()
        if post is None:
            return choice, []
    for block in (choice, *(child for child in choice if child.tag in POST_TAGS)):  # the choice holding the posts
        kinds: dict = {}  # by tag and class first: most blocks have no three siblings of a kind
        for child in block:
            if child.tag in POST_TAGS and len(child):
                kinds.setdefault((child.tag, child.get("class")), []).append(child)
        for kind in kinds.values():
            posts = _same_shape(kind[0], kind) if len(kind) >= 3 else []
            if len(posts) >= 3 and _stamped(posts, posts[0]):
                first = posts[0]
                if _held(first) >= _FIRST_POST and _solid_before(choice, first) <= _BEFORE_POSTS:
                    return first, posts[1:]
                return choice, []
    return choice, []


def _posts(element: Any) -> list | None:
    """``element`` and its siblings of its shape, when they are a thread's posts."""
    parent = element.getparent()
    if parent is None or element.tag not in POST_TAGS or not len(element):
        return None
    kind = element.get("class")
    near = (*islice(element.itersiblings(preceding=True), 2), *islice(element.itersiblings(), 2))
    if not any(sibling.tag == element.tag and sibling.get("class") == kind for sibling in near):
        return None  # posts follow one another: the whole parent is read only when a neighbour is one
    posts = [sibling for sibling in parent if sibling.tag == element.tag and sibling.get("class") == kind]
    posts = _same_shape(element, posts) if len(posts) >= 3 else []
    return posts if len(posts) >= 3 and _stamped(posts, element) else None


def _same_shape(element: Any, siblings: list) -> list:
    shape = _shape(element)
    return [sibling for sibling in siblings if _shape(sibling) == shape]


def _stamped(posts: list, post: Any) -> bool:
    """Whether ``post`` and most of ``posts`` hold a time stamp."""
    return _has_stamp(post) and 2 * sum(map(_has_stamp, posts)) >= len(posts)


def _has_stamp(element: Any) -> bool:
    text = element.text_content()
    return ":" in text and _STAMP.search(text) is not None  # a regex is slow on CJK text: the colon first


def _shape(element: Any) -> tuple:
    """An element's tag and attributes but its id (posts number their ids)."""
    return (element.tag, tuple(sorted((k, v) for k, v in element.attrib.items() if k != "id")))


def _at_same_place(first: Any, post: Any, choice: Any) -> Any:
    """The element of ``first`` reached by the path (child positions) from ``post`` to
    ``choice``, when it has ``choice``'s tag."""
    path = []
    element = choice
    while element is not post:
        parent = element.getparent()
        path.append(parent.index(element))
        element = parent
    element = first
    for position in reversed(path):
        if position >= len(element):
            return None
        element = element[position]
    return element if element.tag == choice.tag else None


def _held(element: Any) -> int:
    return _solid(element) - _solid_tail(element)


def _solid_before(root: Any, element: Any) -> int:
    """Characters of text in ``root`` before ``element``, white space left out."""
    around = set(element.iterancestors())
    total = 0
    for node in root.iter():
        if node is element:
            break
        if isinstance(node.tag, str):
            total += len("".join((node.text or "").split()))
        if node is not root and node not in around:
            total += _solid_tail(node)
    return total


_REPEATED = 20  # characters a line needs for its copies to count
_NEAR = 3  # a copy this many lines after the first or fewer is a repeat


def without_repeated_lines(text: str) -> str:
    """``text`` without a line that repeats one of the few lines just before it: a photo's
    caption under the picture and again in its enlarged view, a credit line. A story may
    repeat a line further apart (an interview's question to each guest, a product's list of
    features in two places), so only near copies go, and never a rule of dashes or stars."""
    kept: list[str] = []
    for line in text.split("\n"):
        if len(line) >= _REPEATED and line in kept[-_NEAR:] and any(c.isalpha() for c in line):
            continue
        kept.append(line)
    return "\n".join(kept)


_CAPTION_CLASS = re.compile(r"(?:^|[\s_-])(?:caption|credit)s?(?:$|[\s_-])", re.IGNORECASE)
# The elements that _CAPTION_CLASS may take: a <figcaption>, or an element with a class (the
# regex judges the class; an XPath that matched its words in any case cost twice as much).
_MAY_BE_CAPTIONS = lxml.etree.XPath("descendant::*[self::figcaption or @class]")


def drop_captions(article: Any) -> None:
    """Take out pictures' captions and credits (``<figcaption>``, a block whose class says
    caption or credit): they describe a picture, not the story, and galleries repeat them."""
    doomed = [
        element
        for element in _MAY_BE_CAPTIONS(article)
        if element.tag == "figcaption" or _CAPTION_CLASS.search(element.get("class") or "")
    ]
    outer = [element for element in doomed if not any(a in doomed for a in element.iterancestors())]
    if not outer:
        return
    if sum(len(e.text_content()) for e in outer) * 2 > len(article.text_content()):
        return  # most of the text: a template that marks every paragraph so, not captions
    for element in outer:
        element.drop_tree()
