"""A short Chinese story on a page whose chrome is English: the story is taken, not the
author's bio or the list of sources beside it, and the English bylines and promotions around
it are left out; an English page is left as readability reads it."""

from __future__ import annotations

import re
from html import escape

import pytest
from support.python_rules import in_python

from scrapy_neardup.fingerprints import readable
from scrapy_neardup.fingerprints.extract import _parse, html_to_text
from scrapy_neardup.fingerprints.headline_script import cjk_count, cjk_headline, cjk_share, without_foreign_lines

STORY = [
    "西岭县今年新建的十二座乡村水厂日前全部通水，全县二十一万农村群众喝上了自来水。",
    "县水利局介绍，水厂采用统一的净水工艺，管网延伸到每个自然村，水价与城区同价。",
]
BIO = (
    "Jane Porter is a writer, editor, speaker, and the founder of a small studio for online publishers. "
    "She teaches courses on design, writing, marketing, and business, and lives by the sea with two dogs, "
    "three cats, and a garden she neglects."
)
SOURCES = [
    'Budget Office, "The Effects of Tariffs and Trade Barriers on Prices," Aug. 22, 2019',
    'Institute for Economics, "The Cost of Another Deal, Explained in Full," Oct. 15, 2019',
    'Reserve Board, "Regional Survey of Business Conditions, Autumn," Oct. 16, 2019',
    "Interview with a trade economist, by email, on tariffs, prices, and farm income, Nov. 5, 2019",
]


def _page(title: str, story: list[str], byline: str = "By Jane Porter, Staff Writer") -> str:
    paragraphs = "".join(f"<p>{escape(p)}</p>" for p in story)
    sources = "".join(f"<p>{escape(s)}</p>" for s in SOURCES)
    return (
        f"<html><head><title>{escape(title)} | The Daily Example</title></head><body>"
        '<div class="top"><a href="/">Home</a> <a href="/news">News</a> <a href="/about">About</a></div>'
        f'<main class="main"><article class="article"><h1>{escape(title)}</h1>'
        f'<div class="byline">{escape(byline)}</div><div class="byline">Updated: Nov. 20, 2019, 10:18 a.m.</div>'
        f'<div class="article__text">{paragraphs}</div></article></main>'
        '<aside class="aside"><div class="widget widget_about-article"><div class="widget__content">'
        f"<div>{sources}</div></div></div>"
        f'<div class="author-box"><div class="author-box__text"><p>{escape(BIO)}</p></div></div></aside>'
        '<div class="foot"><p>Copyright 2019 The Daily Example. All rights reserved.</p></div></body></html>'
    )


CHINESE_PAGE = _page("西岭县乡村水厂全部通水", STORY)


def test_the_page_reads_as_english_to_readability_without_the_rule():
    """The page is the case the rule is for: left to readability, the sources win."""
    article = readable.readable_article(_parse(CHINESE_PAGE), lambda: _parse(CHINESE_PAGE), cjk_headline=False)
    assert "西岭县" not in article.text_content()
    assert cjk_headline(_parse(CHINESE_PAGE))


@pytest.mark.parametrize("python_rules", [False, True], ids=["c-walks", "python"])
def test_a_short_chinese_story_on_an_english_template_is_taken(python_rules):
    text = in_python(html_to_text, CHINESE_PAGE) if python_rules else html_to_text(CHINESE_PAGE)
    assert text.split("\n")[-2:] == STORY  # after the headline, which readability keeps
    assert not any("a" <= c.lower() <= "z" for c in text)  # no byline, date, bio or source


def test_the_c_walks_and_python_give_the_same_text():
    assert html_to_text(CHINESE_PAGE) == in_python(html_to_text, CHINESE_PAGE)


def test_an_english_story_on_the_same_template_is_read_as_before():
    story = [
        "The county opened twelve new village water plants this year, and all of them now run, "
        "so that about 210,000 people in the countryside have tap water like the towns.",
        "The water bureau said the plants share one treatment process, with pipes reaching "
        "every village, and that the price of water is the same as in the county town.",
    ]
    page = _page("Village water plants all open", story)
    assert not cjk_headline(_parse(page))
    text = html_to_text(page)
    assert story[0] in text and story[1] in text
    assert "Updated: Nov. 20, 2019" in text  # no line is left out of an English page


def test_lines_in_another_script_go_figures_and_rules_stay():
    story = "\n".join(
        [
            *STORY,
            "By Jane Porter, Staff Writer",
            "9:20—9:50",
            "┌───┬───┐",
            "Share on facebook",
            "2019-09-07",
        ]
    )
    assert without_foreign_lines(story).split("\n") == [*STORY, "9:20—9:50", "┌───┬───┐", "2019-09-07"]


def test_a_text_without_a_story_of_cjk_is_left_as_it_is():
    text = "Share on facebook\n第一段\nBy Jane Porter"
    assert without_foreign_lines(text) == text
    assert cjk_share("abc 中文") == pytest.approx(2 / 5)


def test_cjk_characters_are_counted_one_by_one():
    """Every character of the CJK ranges counts once, in runs or alone, and nothing else does
    (Latin, digits, full-width punctuation, kana)."""
    one_by_one = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
    for text in [
        "",
        "abc",
        "市政府今天发布通知，要求各区加强防汛工作。",
        "a市b政c",
        "ひらがな漢字",
        "\uf900\u3400\u9fff\ua000",
    ]:
        assert cjk_count(text) == len(one_by_one.findall(text)), text
    assert cjk_count("市政府 said 今天") == 5
