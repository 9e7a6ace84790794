"""The C walks over a page (``_pagewalk``) give exactly what readability's rules give in Python:
the same elements taken out, the same candidates with the same scores in the same order, the
same article text, on pages of every shape.

Skipped only where the extension was not built (no compiler); CI builds it.
"""

from __future__ import annotations

import os
import random
from html import escape

import lxml.etree
import lxml.html
import pytest
from support.python_rules import in_python
from support.real_template_pages import article_page, long_page, menu_page, script_page, short_stories, template

from scrapy_neardup.fingerprints import pagewalk, readable
from scrapy_neardup.fingerprints.extract import html_to_text
from scrapy_neardup.newsworld.templated import TemplateSite

pytestmark = pytest.mark.skipif(
    pagewalk.walker is None and not os.environ.get("NEARDUP_REQUIRE_KERNEL"),
    reason="the C walks were not built (no compiler at install time)",
)

_WORDS = [
    "市政府今天发布通知",
    "要求各区加强防汛工作，",
    "确保群众安全。",
    "The council met on Monday, ",
    "and agreed the budget.",
    "相关新闻",
    "更多",
    "Related stories",
    "评论",
    "，",
    ",",
    "\u3000",
    "\xa0",
    "\n  ",
    " ",
    "2024-03-05",
    "点击查看",
]
_CLASSES = ["", "content", "article-body", "comment", "sidebar", "footer-links", "main", "post", "ad-break", "related"]
_INLINE = ["a", "span", "b", "em", "strong", "font", "code", "i"]
_BLOCKS = ["div", "div", "div", "p", "section", "ul", "li", "table", "pre", "blockquote", "h1", "h2", "aside", "form"]


def _text(rng: random.Random) -> str:
    return escape("".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 9))))


def _attributes(rng: random.Random) -> str:
    parts = []
    if rng.random() < 0.4:
        parts.append(f'class="{rng.choice(_CLASSES)}"')
    if rng.random() < 0.15:
        parts.append(f'id="{rng.choice(_CLASSES)}"')
    if rng.random() < 0.03:
        parts.append("hidden")
    if rng.random() < 0.04:
        parts.append(
            f'style="{rng.choice(["display:none", "DISPLAY : none !important;", "color:red", "visibility:hidden"])}"'
        )
    if rng.random() < 0.03:
        parts.append('itemprop="articleBody"')
    return (" " + " ".join(parts)) if parts else ""


def _element(rng: random.Random, depth: int) -> str:
    if depth > 5 or rng.random() < 0.25:
        tag = rng.choice(_INLINE + ["br", "img"])
        if tag in ("br", "img"):
            return f"<{tag}>{_text(rng)}"
        return f"<{tag}{_attributes(rng)}>{_text(rng)}</{tag}>{_text(rng)}"
    if depth == 1 and rng.random() < 0.2:
        tag = rng.choice(["article", "main", "nav"])
    else:
        tag = rng.choice(_BLOCKS)
    if tag == "table":
        cells = "".join(f"<td>{_text(rng)}{_element(rng, depth + 1)}</td>" for _ in range(rng.randint(1, 3)))
        return f"<table{_attributes(rng)}><tr>{cells}</tr></table>{_text(rng)}"
    children = "".join(_element(rng, depth + 1) + _text(rng) for _ in range(rng.randint(0, 4)))
    return f"<{tag}{_attributes(rng)}>{_text(rng)}{children}</{tag}>{_text(rng)}"


def random_page(seed: int) -> str:
    rng = random.Random(seed)
    body = "".join(_element(rng, 1) for _ in range(rng.randint(1, 6)))
    return f"<html><head><title>t</title><script>var a = '<p>';</script></head><body>{body}</body></html>"


def _pages() -> list[tuple[str, str]]:
    pages = [(f"random {seed}", random_page(seed)) for seed in range(250)]
    site = TemplateSite("ja", "甲城新闻网", template("long", long_page(), "//div[@class='article-text']"))
    for story in short_stories()[:3]:
        pages.append((f"long page {story.story_id}", article_page(site, story.title, list(story.paragraphs))))
    pages.append(("script page", script_page()))
    pages.append(("menu page", menu_page()))
    return pages


PAGES = _pages()


def _keyed(tree):
    for number, element in enumerate(tree.iter()):
        element.set("data-k", str(number))
    return tree


def _python_scores(html: str, ruthless: bool) -> list:
    tree = _keyed(in_python(readable.parse_page, html))
    document = readable._TreeDocument(tree, lambda: None)
    document.html = tree
    tree.find("body").set("id", "readabilityBody")
    if ruthless:
        document.remove_unlikely_candidates()
    document.transform_misused_divs_into_paragraphs()
    return [
        (element.get("data-k"), candidate["content_score"])
        for element, candidate in document.score_paragraphs().items()
    ]


def _c_scores(html: str, ruthless: bool) -> list:
    tree = _keyed(readable.parse_page(html))
    tree.find("body").set("id", "readabilityBody")
    _, scored = pagewalk.walker.score(tree, ruthless, 25)
    return [(element.get("data-k"), score) for element, score in scored]


@pytest.mark.parametrize(("name", "html"), PAGES, ids=[name for name, _ in PAGES])
def test_the_page_is_pruned_as_in_python(name, html):
    assert lxml.html.tostring(readable.parse_page(html)) == lxml.html.tostring(in_python(readable.parse_page, html))


@pytest.mark.parametrize("ruthless", [True, False])
@pytest.mark.parametrize(("name", "html"), PAGES, ids=[name for name, _ in PAGES])
def test_candidates_and_scores_are_readabilitys(name, html, ruthless):
    assert _c_scores(html, ruthless) == _python_scores(html, ruthless)


@pytest.mark.parametrize(("name", "html"), PAGES, ids=[name for name, _ in PAGES])
def test_the_article_text_is_the_same(name, html):
    assert html_to_text(html) == in_python(html_to_text, html)


def test_the_pages_give_candidates_and_take_out_unlikely_ones():
    """The comparisons above compare something: most pages have candidates, and the walk
    takes out unlikely candidates where readability would."""
    with_candidates = sum(bool(_c_scores(html, True)) for _, html in PAGES)
    dropped = 0
    for _, html in PAGES:
        tree = readable.parse_page(html)
        dropped += len(pagewalk.walker.score(tree, True, 25)[0])
    assert with_candidates > 0.7 * len(PAGES)
    assert dropped > 50


def test_short_paragraphs_are_found_as_in_python():
    """The <p>s too short for readability to count, of text only: CJK characters count twice
    (12 of them are short, 13 are not), white space runs count once, a paragraph whose only
    markup was hidden is text only once it is taken out."""
    paragraphs = [
        "一二三四五六七八九十甲乙",
        "一二三四五六七八九十甲乙丙",
        "short line, in English",
        "a line just long enough to count",
        "\u3000 两个 \xa0\n 空白 \u3000",
        "   ",
        '有<a href="#">链接</a>的短行',
        "藏起来<span hidden>的字</span>的短行",
        "",
        "<br>",
    ]
    html = "<html><body><div>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</div></body></html>"
    root = lxml.html.document_fromstring(html)
    for hidden in root.xpath("//*[@hidden]"):
        hidden.drop_tree()
    found = [lxml.html.tostring(p, encoding="unicode") for p in pagewalk.walker.short_paragraphs(root, 25)]
    expected = [lxml.html.tostring(p, encoding="unicode") for p in in_python(readable._short_paragraphs, root)]
    assert found == expected
    assert len(found) == 5  # 12 CJK, the English line, the white space ones, the one whose span went


def test_white_space_and_cjk_are_measured_asin_python():
    text = "\u3000\u3000第一段文字，很长很长很长很长很长很长很长很长很长。\xa0\n  second,  part\u2003end "
    html = f"<html><body><div class='content'><p>{text}</p><p>{text}</p></div></body></html>"
    assert _c_scores(html, True) == _python_scores(html, True)
    assert len(_c_scores(html, True)) == 2  # the <p>s' parent and grandparent: the div and <body>


def test_a_div_of_loose_text_and_inline_runs_is_cut_into_readabilitys_paragraphs():
    run = "这是一段很长的文字，用来测试松散文本被切成段落的规则，" * 2
    html = (
        f"<html><body><div id='x'>{run}<a href='#'>{run}</a>{run}<div>块</div>{run}<br>{run}"
        f"<span>{run}<p>内</p></span>{run}<b>{run}</b></div></body></html>"
    )
    assert _c_scores(html, True) == _python_scores(html, True)
    assert _c_scores(html, True)[0][1] > 20  # the div's loose paragraphs score


@pytest.mark.parametrize(("name", "html"), PAGES[:60] + PAGES[-5:], ids=[name for name, _ in PAGES[:60] + PAGES[-5:]])
def test_the_clean_ups_counts_are_readabilitys(name, html):
    """The counts readability's clean-up weighs a block by (paragraphs, images, list items,
    inputs that are not hidden, embeds), made in one walk, are those of its searches."""
    page = html.replace("<br>", '<img src="a.png"><input type="hidden"><input type="text"><embed src="v">')
    for element in readable.parse_page(page).iter("div", "section", "ul", "table"):
        counts = readable._descendant_counts(element)
        assert counts == {
            "p": len(element.findall(".//p")),
            "img": len(element.findall(".//img")),
            "li": len(element.findall(".//li")),
            "input": len(element.findall(".//input")) - len(element.findall('.//input[@type="hidden"]')),
            "embed": len(element.findall(".//embed")),
        }


def test_the_flat_text_is_made_as_in_python():
    """The text of a block with a line break around each block element, scripts, styles,
    comments and the like left out but not the text after them, the block's own tail kept."""
    from scrapy_neardup.fingerprints import extract

    page = lxml.html.document_fromstring(
        "<html><body><div id='a'>开头<b>粗体</b>尾巴<script>var x;</script>脚本之后<!-- 注释 -->注释之后"
        "<p>段落<br>换行</p><?pi x?>指令之后<svg><text>图</text></svg>图之后<ul><li>一</li><li>二</li></ul>"
        "<table><tr><td>格</td></tr></table><span></span><p></p></div>块之后的字</body></html>"
    )
    block = page.find(".//div")
    lxml.etree.SubElement(block, "{urn:x}p").text = "命名空间"
    joined = pagewalk.walker.flat_text(block, extract._SKIP, extract._BLOCKS)
    assert joined == extract._joined_text(block)
    assert "脚本之后" in joined and "var x" not in joined and "注释" not in joined.replace("注释之后", "")
    assert joined.endswith("块之后的字") and "\n段落\n" in joined and "\n一\n" in joined
    for element in page.iter(lxml.etree.Element):
        assert pagewalk.walker.flat_text(element, extract._SKIP, extract._BLOCKS) == extract._joined_text(element)


def test_labels_are_found_as_in_python():
    """The cheap test before the full one (a CJK hint character in at most 40 characters, or
    in ASCII text a hint word) lets through, in C as in Python, the texts the full test then
    takes: ASCII, CJK, characters beyond U+FFFF, too long."""
    texts = [
        "相关新闻",
        "Related stories",
        "MORE FROM THE EDITORS",
        "Comments (12)",
        "更多 Related",  # not ASCII: the words are not looked for, the CJK hint is
        "Related \U0001f4f0",  # not ASCII, no CJK hint: no label
        "𠀀评论",  # a character beyond U+FFFF before the hint
        "评论" + "。" * 39,  # over 40 characters
        "网友 评论",
        "Read more",
    ]
    story = "".join(
        f"<p>{escape(text)}</p>" for text in ["市政府今天发布通知，要求各区加强防汛工作，确保群众安全。" * 3]
    )
    blocks = "".join(
        f'<div class="box"><h3>{escape(text)}</h3><ul><li><a href="#">甲</a></li></ul></div><p>之间的话</p>'
        for text in texts
    )
    html = f"<html><body><div>{story}{blocks}</div></body></html>"
    found = [
        lxml.html.tostring(element)
        for element in pagewalk.walker.labelled(
            _keyed(lxml.html.document_fromstring(html)), readable._is_label, readable._LONG_TEXT, readable._LONG_BLOCK
        )
    ]
    python = [
        lxml.html.tostring(element)
        for element in readable._labelled_blocks(_keyed(lxml.html.document_fromstring(html)))
    ]
    assert found == python
    assert len(found) == 5  # the four that are labels whole, and "Read more"


@pytest.mark.parametrize(("name", "html"), PAGES, ids=[name for name, _ in PAGES])
def test_divs_become_paragraphs_as_in_python(name, html):
    """readability's <div>-to-paragraph rules on a whole block and on one element's children:
    the C walk sorts the <div>s by the blocks below them, and the tree comes out as the
    Python rules leave it."""
    for whole in (True, False):
        c_tree, python_tree = readable.parse_page(html), readable.parse_page(html)
        if whole:
            readable._divs_into_paragraphs(c_tree.find("body"))
            in_python(readable._divs_into_paragraphs, python_tree.find("body"))
        else:
            for c_element, python_element in zip(list(c_tree.iter()), list(python_tree.iter()), strict=True):
                readable._turn_children_into_paragraphs(c_element)
                in_python(readable._turn_children_into_paragraphs, python_element)
        assert lxml.html.tostring(c_tree) == lxml.html.tostring(python_tree)


def test_divs_are_sorted_by_the_blocks_below_them():
    """A <div> holds a block when any element below it starts like one (<p>, <img>, <table>,
    a <div>, and <param> or <picture> too, as readability's pattern reads), however deep."""
    html = (
        "<html><body><div id='a'><div id='b'>字<span><i><img src='x'></i></span></div>"
        "<div id='c'>只有字<b>粗</b></div><div id='d'><param name='x'></div>"
        "<section><div id='e'><div id='f'></div></div></section></div></body></html>"
    )
    root = lxml.html.document_fromstring(html)
    without, holding = pagewalk.walker.divs_by_blocks(root.find("body"))
    assert [div.get("id") for div in without] == ["c", "f"]
    assert [div.get("id") for div in holding] == ["a", "b", "d", "e"]
    plain, holds = pagewalk.walker.child_divs_by_blocks(root.find("body/div/section"))
    assert plain == [] and holds
    plain, holds = pagewalk.walker.child_divs_by_blocks(root.find("body/div"))
    assert [div.get("id") for div in plain] == ["c"] and holds


@pytest.mark.parametrize(("name", "html"), PAGES[:60] + PAGES[-5:], ids=[name for name, _ in PAGES[:60] + PAGES[-5:]])
def test_texts_below_elements_are_measured_as_in_python(name, html):
    """The solid length of an element's text (counted to the end, or until a limit is passed),
    the elements short enough to be a trailing label, with their texts, readability's
    measures of the text, the solid length of its links' text and its start, as lxml's text_content()
    and the XPaths give them."""
    from scrapy_neardup.fingerprints import article_end

    root = readable.parse_page(html)
    for element in root.iter(lxml.etree.Element):
        solid = readable._solid_length(element.text_content())
        assert pagewalk.walker.solid_length(element) == solid
        assert (pagewalk.walker.solid_length(element, 40) <= 40) == (solid <= 40)
        assert pagewalk.walker.short_texts(element, 40) == in_python(article_end._short_texts, element)
        assert readable._measures(element) == in_python(readable._measures, element)
        assert readable._linked_solid_length(element) == in_python(readable._linked_solid_length, element)
        for most in (0, 1, 40, 500):
            assert readable._text_start(element, most) == in_python(readable._text_start, element, most)


@pytest.mark.parametrize(("name", "html"), PAGES[:60] + PAGES[-5:], ids=[name for name, _ in PAGES[:60] + PAGES[-5:]])
def test_link_lists_are_found_as_in_python(name, html):
    """The blocks mostly of link text that extraction takes out of readability's article."""
    from scrapy_neardup.fingerprints import extract

    root = readable.parse_page(html)
    for element in root.iter("body", "div", "section", "ul"):
        found = pagewalk.walker.link_lists(element, extract._LISTY, extract._LINKED)
        assert found == extract._link_lists(element)


def test_short_texts_leave_out_links_and_count_code_points():
    """Nothing inside a link is a label (a menu's item), nor anything below an element inside
    one; a character beyond U+FFFF is one code point, as XPath's string-length() counts."""
    from scrapy_neardup.fingerprints import article_end

    html = (
        "<html><body><div id='r'><p>相关新闻</p><a href='#'><span>留言</span></a>"
        "<p>𠀀" + "字" * 39 + "</p><p>" + "字" * 41 + "</p><p><b>读者</b>评论</p></div></body></html>"
    )
    root = lxml.html.document_fromstring(html)
    found = [(element.tag, text) for element, text in pagewalk.walker.short_texts(root.find(".//div"), 40)]
    assert found == [("p", "相关新闻"), ("p", "𠀀" + "字" * 39), ("p", "读者评论"), ("b", "读者")]
    assert found == [(e.tag, t) for e, t in in_python(article_end._short_texts, root.find(".//div"))]
    assert pagewalk.walker.short_texts(root.find(".//span"), 40) == []


@pytest.mark.parametrize(("name", "html"), PAGES[:60] + PAGES[-5:], ids=[name for name, _ in PAGES[:60] + PAGES[-5:]])
def test_a_div_without_loose_parts_is_left_as_it_is(name, html):
    """Where the C walk finds in a <div> no text or tail that is not blank, no <br> and no
    inline child, readability's second <div> step (in Python) changes nothing in it."""
    tree = readable.parse_page(html)
    holding = readable._holding_blocks(tree)
    for div in list(tree.iter("div")):
        before = lxml.html.tostring(div, encoding="unicode")
        loose = pagewalk.walker.loose_parts(div)
        in_python(readable._wrap_loose_text, div, holding)
        if not loose:
            assert lxml.html.tostring(div, encoding="unicode") == before
