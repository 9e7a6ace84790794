"""Pages as long as real ones: the article comes out alone, and a page that is not an article
(all navigation, or only its site's chrome) is never taken for a reprint, in a real crawl too."""

from __future__ import annotations

import dataclasses

import lxml.html
import pytest
import pytest_twisted
from itemadapter import ItemAdapter
from support.crawls import run, settings_for, url_path
from support.local_site import NewsSpider
from support.real_template_pages import article_page, long_page, menu_page, short_stories, template, template_world

from scrapy_neardup.fingerprints import readable
from scrapy_neardup.fingerprints.article import SiteText, not_article, site_of
from scrapy_neardup.fingerprints.extract import DEFAULT_EXTRACTOR, html_to_text
from scrapy_neardup.fingerprints.fingerprint import Recipe
from scrapy_neardup.fingerprints.prepare import NOT_ARTICLE, OK, Preparer
from scrapy_neardup.newsworld import serve
from scrapy_neardup.newsworld.templated import TemplateSite

CHROME = [
    "24小时排行",
    "青禾区老旧小区改造",
    "版权所有",
    "ICP备",
    "相关新闻",
    "网友评论",
    "文明上网",
    "分享到",
    "当前位置",
    "原来的正文",
    "登录",
    "专题",
]


@pytest.mark.parametrize("style", [0, 1, 2, 3])
@pytest.mark.parametrize("story", short_stories()[:3], ids=lambda s: s.story_id)
def test_a_short_story_on_a_long_template_comes_out_alone(story, style):
    site = TemplateSite("ja", "甲城新闻网", template("long", long_page(), "//div[@class='article-text']"), style=style)
    page = article_page(site, story.title, list(story.paragraphs))
    assert len(page) > 25_000 > 80 * len(story.text)
    text = html_to_text(page)
    for paragraph in story.paragraphs:
        assert paragraph in text.split("\n")
    for chrome in CHROME:
        assert chrome not in text, chrome
    assert not_article(text) is None


def test_a_page_of_navigation_is_not_an_article_and_is_not_judged():
    preparer = Preparer(Recipe(), DEFAULT_EXTRACTOR)
    prepared = preparer(menu_page(), True, "http://news.example.com/nav/1.html", "news.example.com/nav")
    assert prepared.status == NOT_ARTICLE and prepared.error == "menu"
    assert prepared.fingerprint is None


def test_menu_text_and_articles():
    assert (
        not_article("\n".join(["首页", "要闻", "国内", "国际", "财经", "科技", "12", "13", "Sports", "Home"])) == "menu"
    )
    story = short_stories()[0]
    assert not_article(story.text) is None
    assert not_article("首页\n要闻\n国内") is None  # too few lines to say: judged as text (and short)


def test_lines_another_page_of_the_site_gave_are_taken_out():
    site_text = SiteText()
    chrome = "澜江在线是澜江市重点新闻网站，欢迎社会各界提供新闻线索。"
    first = site_text.strip("a.example.com/news", "http://a.example.com/news/1.html", f"第一篇的正文。\n{chrome}")
    assert first == f"第一篇的正文。\n{chrome}"  # the site's first page: nothing known yet
    second = site_text.strip("a.example.com/news", "http://a.example.com/news/2.html", f"第二篇的正文。\n{chrome}")
    assert second == "第二篇的正文。"
    again = site_text.strip("a.example.com/news", "http://a.example.com/news/2.html", f"第二篇的正文。\n{chrome}")
    assert again == "第二篇的正文。"  # a revisit keeps its own lines, not the site's
    other_site = site_text.strip("b.example.com/news", "http://b.example.com/news/1.html", f"第二篇的正文。\n{chrome}")
    assert other_site == f"第二篇的正文。\n{chrome}"  # a reprint on another site keeps every line


def test_site_of_a_page():
    assert site_of("https://www.example.com/news/2024/1.html") == "www.example.com/news"
    assert site_of("http://127.0.0.1:8000/ja/202403/t1.html") == "127.0.0.1/ja"
    assert site_of("https://example.com/1.html") == "example.com/"
    assert site_of("not a url") == ""
    assert site_of("https://example.com/a/1.html", "Xinhua ") == "xinhua"


def test_site_text_stays_bounded():
    site_text = SiteText(max_sites=3, max_lines=100)
    for n in range(10):
        site_text.strip(f"site{n}", f"page{n}", "\n".join(f"line {n} {i}" for i in range(300)))
    assert len(site_text._sites) == 3
    assert all(len(lines) <= 100 for lines in site_text._sites.values())


def test_every_page_of_the_world_prepares_to_its_story_or_is_passed():
    world = template_world()
    preparer = Preparer(Recipe(), DEFAULT_EXTRACTOR)
    for path in sorted(world.story_of, key=lambda p: world.published[p]):
        key = f"http://127.0.0.1:8000{path}"
        prepared = preparer(world.body(path), True, key, site_of(key))
        if world.site_of[path] == "js":  # the article is written by a script: never the story
            assert prepared.status == NOT_ARTICLE or prepared.fingerprint.chars < 300
            continue
        assert prepared.status == OK
        story = world.stories[world.story_of[path]]
        text = prepared.text.replace("，", ",")  # reprints may change the width of commas, cut or edit
        found = [p for p in story.paragraphs if p[:12].replace("，", ",") in text]
        assert len(found) >= len(story.paragraphs) / 2, path
        for chrome in CHROME:
            assert chrome not in text, (path, chrome)


@pytest.mark.parametrize("workers", [0, 1])
@pytest_twisted.inlineCallbacks
def test_a_crawl_of_long_templates_drops_no_unique_article(tmp_path, workers):
    world = template_world()
    world = dataclasses.replace(world, pages={**world.pages, "/nav/index.html": menu_page()})
    order = sorted(world.story_of, key=lambda p: world.published[p])
    server, base_url = serve(world)
    try:
        result = yield run(
            settings_for(tmp_path / "store", NEARDUP_WORKERS=workers, LOG_LEVEL="INFO"),
            NewsSpider,
            root=base_url.rstrip("/"),
            paths=[*order[:5], "/nav/index.html", *order[5:]],
        )
    finally:
        server.shutdown()
        server.server_close()
    first_copy = {}
    for path in order:
        first_copy.setdefault(world.story_of[path], path)
    dropped = [url_path(ItemAdapter(item)["url"]) for item, _ in result.dropped]
    assert dropped, "the reprints on the long template are found"
    for path in dropped:
        assert first_copy[world.story_of[path]] != path, f"{path} is its story's first copy"
        assert world.site_of[path] != "js", f"{path} has no article text to be a reprint by"
    kept = set(result.paths())
    assert "/nav/index.html" in kept
    assert all(first in kept for first in first_copy.values())
    assert result.stats["neardup/not_article"] >= 1
    assert result.stats["neardup/not_article/menu"] >= 1


VERSE = [
    "这只布老虎",
    "想着心事",
    "虎啸和风声",
    "早已消失",
    "只有巧手的婆姨们",
    "缝出一只只布老虎",
    "三分威严",
    "七分纯朴",
]


def test_a_box_of_a_few_words_is_passed_over_for_a_block_holding_text():
    """A newsletter box whose class says "article" (+25) outscored a short story; it holds a
    few words, so the story, with at least half its score, is taken."""
    box = lxml.html.fragment_fromstring("<div class='article-optin'><p>Get top news in your inbox daily</p></div>")
    lines = [*VERSE, "（来源：甲城新闻网　责任编辑：王丽）"]
    story = lxml.html.fragment_fromstring("<div>" + "".join(f"<p>{line}</p>" for line in lines) + "</div>")
    ranked = [{"elem": box, "content_score": 24.3}, {"elem": story, "content_score": 20.5}]
    assert readable._holding_text(ranked)["elem"] is story
    ranked[1]["content_score"] = 10.0  # under half the box's score: readability's choice stands
    assert readable._holding_text(ranked)["elem"] is box


def test_short_lines_with_links_are_not_joined():
    """A run of short linked lines is a menu: left as it was, it scores nothing."""
    menu = "".join(f"<p><a href='/c/{n}'>{c}</a></p>" for n, c in enumerate(["首页", "要闻", "国内", "国际", "财经"]))
    story = "".join(f"<p>{line}</p>" for line in VERSE)
    tree = readable.parse_page(f"<html><body><div>{menu}</div><div>{story}</div></body></html>")
    assert len(tree.findall(".//div")[0].findall("p")) == 5
    joined = tree.findall(".//div")[1].findall("p")
    assert len(joined) == 1 and len(joined[0].findall("br")) == len(VERSE) - 1


def test_readabilitys_clean_up_does_not_take_out_most_of_the_article_for_a_few_links():
    """A short story beside a few links has a link density over 0.2, and readability's
    clean-up took the block holding it out of its own choice, leaving the byline."""
    lines = [*VERSE, "（来源：甲城新闻网　责任编辑：王丽）"]
    links = "".join(f"<a href='/t/{n}'>标签{n}号链接</a>" for n in range(6))
    article = lxml.html.fragment_fromstring(
        "<div><h1>布老虎</h1><div class='wrap'>" + "".join(f"<p>{line}</p>" for line in lines) + links + "</div></div>"
    )
    block = article.find("div")
    document = readable._TreeDocument(article, lambda: None)
    assert document.get_link_density(block) > 0.2
    document._article_length = readable._length(article.text_content())
    assert not document._clutter(block, {})
    document._article_length = 3 * readable._length(block.text_content())  # a small part of a long article
    assert document._clutter(block, {})
