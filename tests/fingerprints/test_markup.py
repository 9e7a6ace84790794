"""The lighter markup (``_markup``) parses to the page's own tree, less only what extraction
never reads: the attributes it does not read (but those of a thread's posts' tags), the
text of scripts, styles and comments, and what the elements that ``parse_page`` takes out
(never text, <nav>, hidden) hold: the trees are compared once those are out.
Elements keep their source lines, and extraction gives the same text with it and without it.

Skipped only where the scan is not built (no compiler) or lxml's libxml2 is older than the
tokenizer it follows; CI builds it.
"""

from __future__ import annotations

import os
import random

import lxml.etree
import lxml.html
import pytest
from support.real_template_pages import article_page, long_page, menu_page, script_page, short_stories, template

from scrapy_neardup.fingerprints import markup, readable
from scrapy_neardup.fingerprints.extract import html_to_text
from scrapy_neardup.newsworld.templated import TemplateSite

pytestmark = pytest.mark.skipif(
    markup._scanner is None and not os.environ.get("NEARDUP_REQUIRE_KERNEL"),
    reason="the markup scan was not built (no compiler at install time) or libxml2 is older than 2.14",
)


def _tree(html: str) -> list[tuple] | str:
    """Every node of the parsed page as extraction may see it, once what a reader never sees
    is out (:func:`.readable.drop_unseen`): tag, the attributes it reads, text, tail and
    source line; comments left out."""
    try:
        root = lxml.html.document_fromstring(html, parser=readable._PARSER)
    except lxml.etree.ParserError as exc:
        return str(exc)
    readable.drop_unseen(root)
    nodes = []
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        whole = element.tag in markup.WHOLE_TAGS
        read = {name: value for name, value in element.attrib.items() if whole or name in markup.READ_ATTRIBUTES}
        nodes.append((element.tag, read, element.text, element.tail, element.sourceline))
    return nodes


def _same_tree(html: str) -> None:
    lighter = markup.lighter_markup(html)
    assert _tree(lighter) == _tree(html)
    assert lighter.count("\n") == html.count("\n")  # the footer's line is counted on it


# Markup that the tokenizer reads in more than one way, each in a page of its own.
_TRICKY = [
    '<div class="a>b" data-x="1>2" id=\'q"x\'>quoted brackets</div>',
    "<div data-x=1 class=c>unquoted</div><p data-y=a/ class=d>slash in a value</p>",
    '<div\ndata-long="one\ntwo\nthree"\nclass="c">values over lines</div><p>after</p>',
    '<div CLASS="Up" DATA-X="1" ID="i" Style="display:none">upper case names</div>',
    '<div class="one" class="two" data-a="x">the first of two classes</div>',
    "<a/href=x>a slash before a name</a><a/x=1>and before the end</a><br/><img src=x/>text",
    '<p hidden data-x="1">hidden</p><input type="hidden" name="n" value="v"><p itemprop="articleBody" data-z>x</p>',
    '<div data-x="1"class="joined">no space between</div><div data-x = "1" class = "c">spaces</div>',
    '<div x= >an empty value</div><div =odd "name\'s">odd names</div>',
    '<script>var s = \'<div class="x">\'; if (a < b) {}</script><p class="p">after a script</p>',
    "<script><!-- document.write('<script>x</script>'); --></script><p>after escapes</p>",
    "<script><!-- a </script><p>ends the script</p>",
    "<SCRIPT type=text/javascript>x = 1;</SCRIPT ><p data-a=1>upper-case script</p>",
    '<script src="a.js" />\n<p data-a="1">a self-closed script is not raw text</p></script>',
    "<style>p { color: red } </style><div data-x=1>x</div><style>\n.a > .b {}\n</style>",
    '<title>A <b class="x">title</b> & more</title><p data-x="1">body</p>',
    '<textarea data-x="1"><p class="in">not a tag</p></textarea><xmp><b x=1>raw</b></xmp>',
    '<iframe src="x"><p class="in">raw</p></iframe><noembed><i y=2>raw</i></noembed>',
    '<noframes><p class="in" z=3>raw</p></noframes><noscript><p data-x="1">parsed</p></noscript>',
    '<!-- a <div class="x"> comment -->\n<p data-x="1">after</p><!---->x<!-->y<!--->z',
    '<!-- ends with --!> <p data-x="1">after</p><!-- a\nlong\ncomment --><p>line</p>',
    '<!DOCTYPE html PUBLIC "x" "y"><?php echo "<p class=x>"; ?><!bogus <p>><p data-x=1>t</p>',
    '</ 3 class="x"></><p data-a="1">after odd end tags</p>< a not a tag <3',
    '<div class="a">text</div class="b>c"><p data-x="1">an end tag with attributes</p>',
    "<p data-x='1'>the page ends in a tag</p><div class=\"x",
    '<p data-x="1">an unterminated comment</p><!-- <p class="x">',
    "<plaintext><p class=x data-y=1>all text</p>",
    '<svg viewBox="0 0 10 10"><path d="M0 0L10 10"/></svg><select><option value="1">one</select>',
    '<p data-x="中文">中文正文，有“引号”。</p><p class="é" data-y="😀">wide characters 😀</p>',
    '<p data-x="caf\xe9">Latin-1 text, caf\xe9</p>',
    '<table data-x="1"><tr class="r"><td data-y="2" class="c">a cell</td></tr></table>',
    '<div data-a="&quot;>&gt;" class="&amp;x">entities</div><p data-b=a&amp;b>more</p>',
    # Hidden and never-text elements: their content goes only where the builder ends them at their end tag.
    '<nav class="n"><ul><li><a href="/">home</a><li>news</ul></nav><p data-x="1">after the menu</p>',
    '<div style="display:none"><div><p>a panel</div></div><p>after</p><div hidden>x<br>y</div>z',
    '<ul style="DISPLAY : None !important ;"><li>a<li>b</ul><ul style="display:block">c</ul>',
    '<div style="color:red; visibility:hidden">h</div><div style="display:none-ish">v</div>',
    '<div style="display&#58;none">a reference</div><div style=display:none>unquoted</div>',
    '<div style="" style="display:none">a second style</div><div style="display:none" style="">first</div>',
    '<p style="display:none">a paragraph <div>that a div closes</div> and after</p>',
    "<table><tr><td><div hidden>a cell's hidden div</td><td>next cell</td></tr></table>",
    "<div><span hidden>an unclosed span</div><p>after</p>",
    "<a hidden href=x>a link <table><tr><td>that a table closes</td></tr></table></a>",
    "<select><option>one<option>two<optgroup><option>three</select><p>after the select</p>",
    "<div hidden><td>a stray cell</td></div><div hidden><p>a</p></span></div>",
    '<div hidden><body class="late">a second body</body></div><div hidden><meta charset="x"></div>',
    '<svg><g><path d="M0"/><title>raw <b>title</b></title></g></svg><p>after the picture</p>',
    "<noscript><img src=x><iframe><p>raw</p></iframe></noscript><button hidden>b</button>t",
    '<div hidden><!-- a <div> comment --><script>"</div>"</script><textarea></div></textarea></div>q',
    "<div hidden><p>the page ends inside",
    "<nav><div><div><div><div><div><div><div><div><div><div><div><div><div><div><div><div><div>"
    "<div><div><div><div><div><div><div><div><div><div><div><div><div><div><div><div><div>deep"
    "</div></div></div></div></div></div></div></div></div></div></div></div></div></div></div>"
    "</div></div></div></div></div></div></div></div></div></div></div></div></div></div></div>"
    "</div></div></div></nav>after",
    "<div hidden><d中v>a wide name</d中v></div><div hidden><d?v>x</d?v></div>",
]


@pytest.mark.parametrize("body", _TRICKY, ids=range(len(_TRICKY)))
def test_the_tree_is_the_pages_less_what_is_not_read(body):
    _same_tree(f"<html><head><title>t</title></head><body>{body}</body></html>")
    _same_tree(body)  # no document around it


def test_unread_attributes_scripts_styles_and_comments_are_left_out_and_lines_kept():
    page = (
        '<html><head><script>\nvar a = "<b>";\n</script><style>p {}</style></head>'
        '<body><!-- a\ncomment --><p class="c" data-track="x\ny" onclick="go()">text</p>'
        '<div class="post" data-floor="2">a post keeps its attributes</div></body></html>'
    )
    lighter = markup.lighter_markup(page)
    assert "data-track" not in lighter and "onclick" not in lighter and "var a" not in lighter
    assert "p {}" not in lighter and "comment" not in lighter
    assert 'class="c"' in lighter and ">text</p>" in lighter
    assert '<div class="post" data-floor="2">' in lighter
    assert lighter.count("\n") == page.count("\n")
    assert len(lighter) < len(page)


def test_what_parse_page_takes_out_is_left_out_with_its_content():
    page = (
        '<html><body><nav class="menu"><ul><li><a href="/a">首页</a></li><li>国内\n新闻</li></ul></nav>'
        '<div style="display: none"><p>弹出的登录框</p></div><div hidden><p>隐藏的面板</p></div>'
        '<p class="c">正文。</p><select><option>一</option></select></body></html>'
    )
    lighter = markup.lighter_markup(page)
    for gone in ("首页", "国内", "弹出的登录框", "隐藏的面板", "<option"):
        assert gone not in lighter
    assert '<nav class="menu">\n</nav>' in lighter and '<p class="c">正文。</p>' in lighter
    assert lighter.count("\n") == page.count("\n")
    _same_tree(page)


def test_an_element_the_builder_may_close_elsewhere_keeps_its_content():
    for page in (
        "<table><tr><td><div hidden>未闭合的层</td><td>下一格</td></tr></table>",
        "<p style='display:none'>段落<div>层</div>之后</p>",
        "<nav><table><tr><td>一格</nav>",  # a cell's end priority is higher: the builder ignores </nav>
    ):
        lighter = markup.lighter_markup(page)
        assert "层" in lighter or "格" in lighter
        _same_tree(page)
    assert markup.lighter_markup("<nav><ul><li>一</nav>x") == "<nav></nav>x"  # </nav> closes the list


def test_markup_made_to_waste_the_search_for_ends_parses_to_the_same_tree():
    """Unclosed hidden elements, each of which the scan reads on from until it gives up: past
    a page's worth of such reading it stops looking for ends, and elements keep their content."""
    page = "<div>" + "<span hidden>字<br>" * 400 + "</div><nav><p>菜单</p></nav>"
    lighter = markup.lighter_markup(page)
    assert "菜单" in lighter
    _same_tree(page)
    story = "<p>" + "正文。" * 200 + "</p>"
    assert "菜单" not in markup.lighter_markup(
        "<div>" + "<span hidden>字<br>" * 5 + "</div><nav><p>菜单</p></nav>" + story
    )


def test_under_another_libxml2_elements_keep_their_content(monkeypatch):
    """Where the element ends is the tree builder's rule, followed for libxml2 2.14 only."""
    monkeypatch.setattr(markup, "_EMPTIES", False)
    page = "<nav><ul><li>一</li></ul></nav><div hidden>二</div>三"
    lighter = markup.lighter_markup(page)
    assert "一" in lighter and "二" in lighter
    _same_tree(page)


_FRAGMENTS = [
    "<div",
    "<p",
    "<a",
    "<script",
    "<style",
    "<title",
    "<textarea",
    "</div",
    "</script",
    "</style",
    "</p",
    ">",
    "/>",
    "/",
    " ",
    "\n",
    "\t",
    "=",
    '"',
    "'",
    ' class="c"',
    " class=x",
    ' data-x="1"',
    " data-y=2",
    " hidden",
    " id='i'",
    ' style="display:none"',
    "<!--",
    "-->",
    "--!>",
    "<!",
    "<?",
    "<!-- <script>",
    "</",
    "-",
    "<",
    "文字",
    "text",
    "&amp;",
    "😀",
    "<nav",
    "</nav",
    "<ul",
    "<li",
    "</li",
    "<table",
    "<td",
    "</td",
    "<select",
    "<option",
    "<body",
    " style='visibility: hidden !important'",
]


@pytest.mark.parametrize("seed", range(300))
def test_random_markup_parses_to_the_same_tree(seed):
    """Runs of fragments that break tags, quotes, comments and raw text in every way."""
    rng = random.Random(seed)
    _same_tree("".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(5, 80))))


def _pages() -> list[tuple[str, str]]:
    site = TemplateSite("ja", "甲城新闻网", template("long", long_page(), "//div[@class='article-text']"))
    pages = [
        (f"long page {story.story_id}", article_page(site, story.title, list(story.paragraphs)))
        for story in short_stories()[:3]
    ]
    return [*pages, ("long page", long_page()), ("script page", script_page()), ("menu page", menu_page())]


PAGES = _pages()


@pytest.mark.parametrize(("name", "html"), PAGES, ids=[name for name, _ in PAGES])
def test_real_template_pages_parse_to_the_same_tree_and_text(name, html, monkeypatch):
    _same_tree(html)
    text = html_to_text(html)
    monkeypatch.setattr(markup, "_scanner", None)
    assert html_to_text(html) == text
    assert text or name == "script page"
