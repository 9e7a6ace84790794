"""Short stories that readability used to lose to the chrome around them: a 相关新闻 list in
the story's own container (readability's clean-up took the story out of its choice before
the list was cut), and a site footer of licence lines (prose with commas, it lifted the whole
page above a story of short lines)."""

from __future__ import annotations

from html import escape

import pytest
from support.python_rules import in_python

from scrapy_neardup.fingerprints import readable
from scrapy_neardup.fingerprints.extract import html_to_text

STORY = [
    "澜江市今年新建的八座口袋公园日前全部开放，每座占地一千到三千平方米，配有座椅、步道和儿童游乐设施。",
    "市园林局介绍，公园选址在老城区的闲置地块上，附近居民步行五分钟就能到达，开放时间为早六点到晚十点。",
    "居民们说，家门口多了休闲的去处，傍晚散步、周末带孩子玩耍都方便了，希望今后能再多建一些。",
]
LEADS = [
    (
        "北川湿地公园迎来候鸟迁徙高峰",
        "本报讯连日来北川湿地公园迎来候鸟迁徙高峰，白鹭苍鹭和绿头鸭等二十余种候鸟在湿地停歇觅食"
        "的景象吸引了大批市民和摄影爱好者前来观赏拍摄，公园管理处为此增派巡护人员并在湿地沿岸设置"
        "观鸟点位和提示牌提醒游客文明观鸟不投喂不惊扰，湿地周边村民也自发组成护鸟队每天早晚沿岸巡查"
        "并劝阻捕鸟行为和拆除湿地里的非法网具和捕鸟笼。",
    ),
    (
        "南湖片区地下管网改造开工",
        "本报讯南湖片区地下管网改造工程近日开工，将新建和改造雨污水管道三十六公里，实施雨污分流，"
        "工程分三个标段同步推进，计划年底前完工，施工期间相关路段实行半幅通行，请市民提前规划路线。",
    ),
]
# A list-shaped story: lines too short for readability to score one by one.
LINES = [
    "第一站：青禾区老年活动中心",
    "第二站：云栖镇文化广场",
    "第三站：东岭街道社区服务中心",
    "第四站：西原县人民医院门诊大楼",
    "第五站：澜江市图书馆新馆",
]
FOOTER = (
    '澜江日报网 <a href="/beian">澜ICP备12345678号-1</a> 经营许可证编号：澜B-2-4-20100001<br>'
    "澜江日报社 版权所有，未经许可不得转载<br>"
    "澜江市互联网违法和不良信息举报电话：0000-12345678；举报邮箱：jubao@example.com<br>"
    "互联网新闻信息服务许可证编号：00000000000001"
)


def related_in_the_story_box() -> str:
    """The story in a box whose class says "widget", a 相关新闻 list beside it in one container."""
    paragraphs = "".join(f"<p>{escape(p)}</p>" for p in STORY)
    leads = "".join(
        f'<li><a href="/{n}.html">{escape(t)}</a><p>{escape(lead)}</p></li>' for n, (t, lead) in enumerate(LEADS)
    )
    return (
        "<html><head><title>澜江市八座口袋公园全部开放</title></head><body>"
        '<div class="menu"><a href="/">首页</a> <a href="/city">城市</a> <a href="/life">生活</a></div>'
        "<h1>澜江市八座口袋公园全部开放</h1>"
        '<div class="elementor-widget elementor-widget-theme-post-content">'
        f'<div class="elementor-widget-container">{paragraphs}</div>'
        f'<div class="related"><h3>相关新闻</h3><ul>{leads}</ul></div>'
        "</div></body></html>"
    )


def footer_after_a_list() -> str:
    """A small page: a story of short lines, and a footer of licence lines with commas."""
    lines = "".join(f"<p>{escape(line)}</p>" for line in LINES)
    return (
        "<html><head><title>健康服务进社区活动下周启动</title></head><body>"
        '<div class="top"><a href="/">首页</a> &gt; <a href="/news">要闻</a> &gt; 正文</div>'
        '<div class="layer"><div class="headline">健康服务进社区活动下周启动</div>'
        '<div class="info">发布时间：2024-03-05 08:30 来源：澜江日报</div>'
        f'<div class="txt">{lines}</div></div>'
        f'<div id="bottom">{FOOTER}</div>'
        "</body></html>"
    )


@pytest.mark.parametrize("python_rules", [False, True], ids=["c-walks", "python"])
def test_a_related_list_beside_the_story_is_cut_before_the_clean_up(python_rules):
    page = related_in_the_story_box()
    text = in_python(html_to_text, page) if python_rules else html_to_text(page)
    assert text.split("\n")[-3:] == STORY
    assert "相关新闻" not in text and "候鸟" not in text


def test_cut_after_the_clean_up_the_related_list_comes_in(monkeypatch):
    """The page is the case: cut after readability's clean-up (as before), the clean-up has
    taken the story's "widget" box out of the choice, the list is left with no story before
    its label, and the other stories' leads come in."""
    from scrapy_neardup.fingerprints.article_end import cut_at_trailing_label

    monkeypatch.setattr(readable, "cut_at_trailing_label", lambda article: None)
    clean_up = readable._TreeDocument.sanitize

    def cut_after(self, node, candidates, keep_all_images=False):
        html = clean_up(self, node, candidates, keep_all_images)
        cut_at_trailing_label(node)
        return html

    monkeypatch.setattr(readable._TreeDocument, "sanitize", cut_after)
    assert "候鸟" in html_to_text(related_in_the_story_box())


@pytest.mark.parametrize("python_rules", [False, True], ids=["c-walks", "python"])
def test_a_site_footer_is_not_taken_with_a_short_story(python_rules):
    page = footer_after_a_list()
    text = in_python(html_to_text, page) if python_rules else html_to_text(page)
    assert text.split("\n")[-len(LINES) :] == LINES
    assert "ICP" not in text and "举报" not in text and "许可证" not in text


def test_with_its_footer_the_whole_page_is_chosen(monkeypatch):
    monkeypatch.setattr(readable, "_drop_site_footer", lambda root, html, lines: None)
    text = html_to_text(footer_after_a_list())
    assert "ICP" in text


def test_a_story_that_names_a_registration_number_keeps_it():
    """Only a block of a footer's length goes: a paragraph of a story that quotes a
    registration number stays."""
    quoting = (
        "记者调查发现，这家网站首页底部标注的ICP备案号澜ICP备12345678号并不属于它，"
        "而是冒用了一家已经注销的公司的备案信息，通信管理部门已经介入调查，"
        "并提醒网民在网上购物前先到工业和信息化部的备案管理系统核对网站的备案信息，"
        "对于备案信息与网站主办者不符的网站，不要轻易输入银行卡号和密码，以免上当受骗。"
        "通信管理部门表示，今年以来已经查处冒用备案信息的网站四十多家，关停其中的三十家，"
        "其余的已经责令限期整改，并将对整改情况进行复查，复查不合格的一律关停。"
    )
    page = (
        "<html><head><title>网站冒用备案号被查</title></head><body><h1>网站冒用备案号被查</h1>"
        f'<div class="content"><p>{escape(STORY[0])}</p><p>{escape(quoting)}</p></div></body></html>'
    )
    assert quoting in html_to_text(page)


def test_a_short_story_in_the_footers_block_stays():
    """A template that puts its registration line in the story's own block: the block holds
    sentences, so it is not a footer."""
    page = (
        "<html><head><title>口袋公园全部开放</title></head><body><h1>口袋公园全部开放</h1>"
        f'<div class="txt"><p>{escape(STORY[0])}</p>澜江日报网 <a href="/beian">澜ICP备12345678号-1</a></div>'
        "</body></html>"
    )
    assert STORY[0] in html_to_text(page)
