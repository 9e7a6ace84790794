"""Pages as long as real news pages, written for these tests, and a world of sites built on them.

``long_page()`` is a 2010s portal page: scripts and styles, a channel bar, a breadcrumb, a
side column of headline lists, a 相关新闻 block and comments (added by the world's
rendering), a footer with a copyright and a licence number. ``script_page()`` is a site that
renders its article with a script: the visible page holds only the site's chrome and a long
paragraph about the site, the same on every page. ``menu_page()`` is all navigation.
"""

from __future__ import annotations

from html import escape

import lxml.html

from scrapy_neardup.newsworld import DEFAULT_STORIES, Story, build_world
from scrapy_neardup.newsworld.sites import ArticleView
from scrapy_neardup.newsworld.templated import Template, TemplateSite

_CHANNELS = [
    "首页",
    "要闻",
    "国内",
    "国际",
    "财经",
    "科技",
    "体育",
    "娱乐",
    "汽车",
    "房产",
    "教育",
    "健康",
    "旅游",
    "文化",
    "评论",
    "图片",
    "视频",
    "专题",
    "直播",
    "数据",
]
_HEADLINES = [
    "青禾区老旧小区改造进入收尾阶段",
    "云栖镇茶叶节吸引八方游客",
    "东岭高铁站周边道路完成提升",
    "澜江市启动夏季防汛演练",
    "西原县新建三所乡镇卫生院投入使用",
    "北川湿地公园迎来候鸟迁徙高峰",
    "南湖片区地下管网改造开工",
    "市图书馆延长周末开放时间",
    "全市中小学启用新版课后服务平台",
    "澜江港集装箱吞吐量创同期新高",
    "城区新增两条夜间公交线路",
    "农村电商培训班开班",
]
_SCRIPT = "\n".join(
    f"window.__cfg{i} = {{id: {i}, channel: '{c}', ts: 1700000000{i:03d}}};" for i, c in enumerate(_CHANNELS * 6)
)
_STYLE = "\n".join(f".m{i} {{ margin: {i % 9}px; padding: {i % 4}px {i % 6}px; }}" for i in range(400))
_ABOUT = (
    "澜江在线是澜江市重点新闻网站，由澜江日报社主办，坚持正确舆论导向，立足本地、服务全市，"
    "全天候发布时政、经济、社会、文化等各类新闻资讯，致力于为广大网友提供权威、及时、准确的信息服务，"
    "欢迎社会各界提供新闻线索，共同记录这座城市的发展变化和百姓生活中的点点滴滴。"
)


def _links(titles: list[str], prefix: str) -> str:
    return "".join(
        f'<li><a href="https://www.example.com/{prefix}/{n}.html">{escape(t)}</a></li>' for n, t in enumerate(titles)
    )


def _chrome_head(title: str) -> str:
    return (
        f'<head><meta charset="utf-8"><title>{escape(title)}</title><style>{_STYLE}</style>'
        f"<script>{_SCRIPT}</script></head>"
    )


def _top() -> str:
    return (
        '<div class="top-bar"><span>2024年3月5日 星期二</span><a href="https://www.example.com/login">登录</a>'
        '<a href="https://www.example.com/reg">注册</a></div>'
        f'<div class="channel-bar"><ul>{_links(_CHANNELS, "channel")}</ul></div>'
    )


def _side() -> str:
    return (
        f'<div class="side"><div class="box"><h3>24小时排行</h3><ol>{_links(_HEADLINES, "hot")}</ol></div>'
        f'<div class="box"><h3>图片新闻</h3><ul>{_links(_HEADLINES[::-1], "pic")}</ul></div>'
        '<div class="box"><h3>专题</h3><ul>'
        + _links(["两会时间", "城市更新", "乡村振兴", "美丽河湖"], "zt")
        + "</ul></div></div>"
    )


def _foot() -> str:
    return (
        '<div class="foot"><p><a href="https://www.example.com/about">关于我们</a> | '
        '<a href="https://www.example.com/ad">广告服务</a> | <a href="https://www.example.com/contact">联系我们</a></p>'
        "<p>澜江在线 版权所有 未经授权禁止转载、摘编、复制或建立镜像</p>"
        "<p>互联网新闻信息服务许可证：00000000000 澜ICP备00000000号-1</p></div>"
    )


def long_page() -> str:
    """A long portal article page (about 40 KB) with its original story in ``div.article-text``."""
    original = "".join(f"<p>　　原来的正文第{n}段，讲的是另一件事，和本页要放的新闻没有关系。</p>" for n in range(1, 9))
    return (
        f"<!DOCTYPE html><html>{_chrome_head('原来的标题_澜江在线')}<body>{_top()}"
        '<div class="crumb">当前位置：<a href="https://www.example.com/">首页</a> &gt; <a href="https://www.example.com/news">要闻</a></div>'
        '<div class="wrap"><div class="main"><h1 class="title">原来的标题</h1>'
        '<div class="info">2024-03-05 08:30　来源：澜江在线　<span class="font">字号：大 中 小</span></div>'
        f'<div class="article-text">{original}</div>'
        '<div class="share">分享到：<a href="javascript:;">微信</a> <a href="javascript:;">微博</a></div>'
        f"</div>{_side()}</div>{_foot()}</body></html>"
    )


def script_page() -> str:
    """A page whose article a script writes: readers see it, extraction does not."""
    return (
        f"<!DOCTYPE html><html>{_chrome_head('快讯_西岭客户端')}<body>{_top()}"
        '<div class="main"><h1>原来的标题</h1><script type="text/template" id="article">原来的正文</script>'
        f'<div class="about"><p>{_ABOUT}</p></div></div>{_side()}{_foot()}</body></html>'
    )


def menu_page() -> str:
    """A page that is all navigation: channels, tags and a calendar, not a story."""
    tags = "".join(f"<span class='tag'>{escape(t[:4])}</span>" for t in _HEADLINES)
    days = "".join(f"<td>{d}</td>" for d in range(1, 32))
    channels = "".join(f"<div class='ch'>{c}</div>" for c in _CHANNELS)
    return (
        f'<!DOCTYPE html><html>{_chrome_head("频道导航")}<body>{_top()}<div class="main">'
        f'<div class="channels">{channels}</div><div class="tags">{tags}</div>'
        f'<table class="calendar"><tr><th>日</th><th>一</th><th>二</th><th>三</th><th>四</th><th>五</th><th>六</th></tr>'
        f"<tr>{days}</tr></table></div>{_foot()}</body></html>"
    )


def template(name: str, html: str, article_xpath: str) -> Template:
    root = lxml.html.document_fromstring(html)
    article = root.xpath(article_xpath)[0]
    headline = root.find(".//h1")
    return Template.from_page(name, root, article, headline)


def short_stories() -> list[Story]:
    """Stories of 100-300 characters: the first paragraph of the default stories that the
    world does not tell whole (a site never tells one story twice)."""
    return [
        Story(f"{s.story_id}-short", s.title, s.paragraphs[:1])
        for s in DEFAULT_STORIES[8:]
        if 100 <= len(s.paragraphs[0]) <= 300
    ]


def template_world(seed: int = 3) -> object:
    """Three sites on the long template (two sharing it, as sites on one CMS do) and one on
    the script template; long and short stories, each published once and reprinted 1-2 times."""
    long_template = template("long", long_page(), "//div[@class='article-text']")
    script_template = template("script", script_page(), "//script[@id='article']")
    sites = [
        TemplateSite("ja", "甲城新闻网", long_template, style=0),
        TemplateSite("jb", "乙城新闻网", long_template, style=1),
        TemplateSite("jc", "丙城在线", long_template, style=2),
        TemplateSite("js", "西岭客户端", script_template, style=3),
    ]
    stories = list(DEFAULT_STORIES[:8]) + short_stories()[:6]
    return build_world(stories=stories, sites=sites, seed=seed, reprints=(1, 2), per_page=10)


def article_page(site: TemplateSite, title: str, paragraphs: list[str]) -> str:
    """``site``'s page of a story, with a 相关新闻 list of four short stories and a comment."""
    others = [(s.title, f"/{s.story_id}.html", s.paragraphs[0][:30] + "。") for s in short_stories()[:4]]
    view = ArticleView(
        path="/x.html",
        title=title,
        paragraphs=paragraphs,
        date="2024-03-05 08:30",
        source="甲城新闻网",
        author="",
        editor="王丽",
        leads=others,
        comments=[("网友", "2024-03-05 09:00", "支持，希望尽快落实。")],
    )
    return site.render_article(view, [])
