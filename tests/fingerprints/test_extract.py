"""HTML extraction: the article body as text, whatever the template, encoding or breakage."""

from __future__ import annotations

import random

import pytest
from scrapy.http import HtmlResponse, Response, TextResponse

from scrapy_neardup.fingerprints.extract import ExtractionError, decode_html, extract_text, html_to_text, looks_binary
from scrapy_neardup.newsworld.small import DISCLAIMER, PROMOTION, STORIES, page_a, page_b, page_c, small_world

TITLE, PARAGRAPHS = STORIES["metro"].title, list(STORIES["metro"].paragraphs)
NOISE = [
    "首页",
    "热门排行",
    "网友评论",
    "支持！",
    "24小时热点",
    "推荐阅读",
    "联系我们",
    "未经授权禁止转载",
    "window.dataLayer",
    "分享到",
]


@pytest.mark.parametrize("template", [page_a, page_b, page_c])
def test_body_is_extracted_one_paragraph_per_line_without_page_furniture(template):
    text = html_to_text(template(TITLE, PARAGRAPHS))
    lines = text.split("\n")
    for paragraph in PARAGRAPHS:
        assert paragraph in lines
    for noise in NOISE:
        assert noise not in text, noise


def test_site_disclaimer_inside_the_body_is_kept():
    # It is part of the article block; the detector, not the extractor, must cope with it.
    assert html_to_text(page_a(TITLE, PARAGRAPHS)).endswith(DISCLAIMER)


def test_inline_markup_does_not_split_a_paragraph():
    text = html_to_text(
        "<html><body><article><p>第一句<b>加粗</b>和<a href='#'>链接</a>都在同一段里，"
        + "文字" * 30
        + "。</p></article></body></html>"
    )
    assert text.startswith("第一句加粗和链接都在同一段里，") and "\n" not in text


def test_br_breaks_lines():
    text = html_to_text(page_c(TITLE, PARAGRAPHS))
    assert text.count("\n") >= len(PARAGRAPHS) - 1


def test_bytes_are_decoded_from_meta_charset():
    data = small_world().body("/bad/gbk.html")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    text = html_to_text(data)
    assert STORIES["oldstreet"].paragraphs[0] in text
    assert decode_html(data).count("丁字街") >= 2


def test_bytes_with_a_given_encoding():
    html = page_b(TITLE, PARAGRAPHS).replace("charset=utf-8", "")
    assert PARAGRAPHS[0] in html_to_text(html.encode("gb18030"), encoding="gb18030")


def test_utf8_bytes_without_any_declaration():
    html = "<html><body><div>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS) + "</div></body></html>"
    assert PARAGRAPHS[1] in html_to_text(html.encode("utf-8"))


def test_broken_html_still_gives_the_text():
    text = html_to_text(small_world().body("/bad/broken.html"))
    for paragraph in STORIES["robots"].paragraphs:
        assert paragraph in text


@pytest.mark.parametrize(
    "html",
    [
        "<p>未闭合的段落<div><<<>>> 文字 <p>再来一段" + "内容" * 20,
        "<html><body><table><tr><td>" + "表格里的正文。" * 10,
        "</div></p></body>" + "没有开始标签的正文。" * 10,
        "<?xml version='1.0' encoding='utf-8'?><html><body><p>" + "带XML声明的页面正文。" * 10 + "</p></body></html>",
    ],
)
def test_malformed_markup_never_raises(html):
    assert "正文" in html_to_text(html) or "文字" in html_to_text(html)


def test_page_without_text_gives_empty_or_little():
    assert html_to_text("") == ""
    assert html_to_text("   ") == ""
    assert html_to_text("<html><head><title>只有标题") == ""
    assert len(html_to_text(small_world().body("/bad/empty.html"))) < 10


def test_binary_content_is_a_clear_error():
    data = small_world().body("/bad/binary.png")
    with pytest.raises(ExtractionError, match="binary content, not HTML"):
        html_to_text(data)
    with pytest.raises(ExtractionError, match="binary content, not HTML"):
        html_to_text(data.decode("latin-1"))
    with pytest.raises(ExtractionError, match="binary"):
        html_to_text(random.Random(1).randbytes(3000).decode("utf-8", errors="replace"))


def test_non_text_input_is_a_clear_error():
    with pytest.raises(ExtractionError, match="got int"):
        html_to_text(42)  # type: ignore[arg-type]


def test_looks_binary():
    assert looks_binary(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert not looks_binary(small_world().body("/bad/gbk.html"))  # legacy encodings are text
    assert not looks_binary(page_a(TITLE, PARAGRAPHS))
    assert not looks_binary("")


def test_a_page_with_body_tags_in_its_body_has_one_body():
    """readability marks the page's <body> (its id weighs in the scores); it is looked for
    as the child of <html>, which holds when the parser keeps a single <body>, as it does
    with later <body> tags in the page, in a table or after the end of the document."""
    from scrapy_neardup.fingerprints.readable import parse_page

    page = page_a(TITLE, PARAGRAPHS)
    misplaced = page.replace("<article>", '<article><body class="inner">').replace(
        "</article>", "<table><tr><td><body>表格</body></td></tr></table></article>"
    )
    misplaced = misplaced.replace("</html>", '</html><body class="late"><p>页尾</p></body>')
    tree = parse_page(misplaced)
    assert [body.getparent().tag for body in tree.iter("body")] == ["html"]
    text = html_to_text(misplaced)
    assert PARAGRAPHS[0] in text and PARAGRAPHS[-2] in text


def test_ids_repeated_on_a_page_change_nothing():
    """Templates repeat ids (every list item "item", two "content" blocks); elements are
    never looked up by id, so a page reads the same with its ids repeated."""
    page = page_a(TITLE, PARAGRAPHS)
    repeated = page.replace('<div class="', '<div id="box" class="').replace("<li>", '<li id="item">')
    repeated = repeated.replace("<p>", '<p id="paragraph">')
    assert repeated.count('id="box"') > 1 and repeated.count('id="item"') > 1 and repeated.count('id="paragraph"') > 1
    assert html_to_text(repeated) == html_to_text(page)
    assert PARAGRAPHS[0] in html_to_text(repeated)


def test_looks_binary_counts_control_characters_in_text_and_bytes():
    """Without a NUL, content is binary when more than 5% of its start is control characters
    (tab, line feed and carriage return are text); CJK text around them does not change that."""
    text = "新闻正文，第一段。\t\r\n" * 40
    noisy = "".join(f"{character}\x01" if i % 30 == 0 else character for i, character in enumerate(text))
    very_noisy = "".join(f"{character}\x1b\x07" for character in text)
    assert not looks_binary(text) and not looks_binary(text.encode("utf-8"))
    assert not looks_binary(noisy)  # one control character in thirty
    assert looks_binary(very_noisy) and looks_binary(very_noisy.encode("utf-8"))
    assert looks_binary("\ufffd" * 30 + "正文" * 100)  # undecodable characters count too


def test_extract_text_from_a_response_uses_its_encoding():
    body = page_a(TITLE, PARAGRAPHS).replace('<meta charset="utf-8">', "").encode("gbk")
    response = HtmlResponse("http://example.com/a", body=body, headers={"Content-Type": "text/html; charset=gbk"})
    text = extract_text(response)
    assert PARAGRAPHS[0] in text and "热门排行" not in text


def test_extract_text_rejects_a_binary_response():
    response = Response("http://example.com/x.png", body=small_world().body("/bad/binary.png"))
    with pytest.raises(ExtractionError, match=r"binary response from http://example\.com/x\.png"):
        extract_text(response)


def test_extract_text_with_another_extractor():
    response = TextResponse("http://example.com/t", body="<p>文字</p>".encode(), encoding="utf-8")
    assert extract_text(response, extractor=lambda html: html.upper()) == "<P>文字</P>"


def test_reprints_on_other_templates_extract_to_nearly_the_same_text():
    original = html_to_text(small_world().body("/a/flood.html"))
    reprint = html_to_text(small_world().body("/c/flood.html"))
    assert PROMOTION in reprint
    shared = [p for p in STORIES["flood"].paragraphs if p in original and p in reprint.replace("\n", "")]
    assert len(shared) >= len(STORIES["flood"].paragraphs) - 1  # all but the edited paragraph


def test_mislabelled_gbk_and_utf16_pages_are_decoded_not_counted_as_errors():
    """A GBK page under a UTF-8 label, and a UTF-16 page with its BOM, reach the fingerprint
    as the article's text; binary content is still refused."""
    from scrapy_neardup.fingerprints.fingerprint import Recipe
    from scrapy_neardup.fingerprints.prepare import OK, Preparer

    paragraph = "北京市今天召开新闻发布会，介绍城市更新行动的最新进展和下一步的工作安排。"
    page = f'<html><head><meta charset="utf-8"></head><body><article><p>{paragraph * 4}</p></article></body></html>'
    preparer = Preparer(Recipe(), "scrapy_neardup.fingerprints.extract.html_to_text")
    reference = preparer(page, True)
    assert reference.status == OK
    for data in (page.encode("gbk"), page.encode("utf-16"), page.encode("utf-16-be").join([b"\xfe\xff", b""])):
        prepared = preparer(data, True)
        assert prepared.status == OK, prepared.error
        assert prepared.fingerprint.sentence_keys == reference.fingerprint.sentence_keys
    assert preparer(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20, True).status != OK


def test_the_call_to_action_is_looked_for_as_readabilitys_pattern_finds_it():
    """The cheap test before readability's call-to-action pattern (its words' parts in the
    text's ASCII characters) lets every text through that the pattern finds a word in,
    case-blind letters outside ASCII included (ſ for s, İ and ı for i)."""
    from scrapy_neardup.fingerprints import readable

    pattern = readable._CALL_TO_ACTION_ANYWHERE
    assert readable._CALL_TO_ACTION_CORES is not None
    texts = [
        "市政府今天发布通知。",
        "请 SUBSCRIBE 我们的频道",
        "ſubſcribe today",
        "Sİgn up for news",
        "sıgn up",
        "Download。",
        "get THE latest 新闻",
        "sign_up",
        "designers sign upward",
        "",
    ]
    for text in texts:
        assert readable._may_call_to_action(text) == (pattern.search(text) is not None), text
    assert not readable._may_call_to_action("市政府今天发布通知，要求各区加强防汛工作。" * 50)
