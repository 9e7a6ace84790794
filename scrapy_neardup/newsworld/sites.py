"""Five news sites, each with its own HTML template and URL scheme.

The templates carry what makes real news pages hard to extract and to compare: navigation,
"热门文章" side lists with other articles' titles, comment blocks, advertisement and app
promotion boxes, footers with copyright lines, and (on 南湖在线) a long disclaimer inside
every article body. One site is served in GBK with the charset only in a ``<meta>`` tag.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from html import escape

# A shared style block: real pages carry far more, this keeps pages at a realistic 10-20 KB.
_CSS = "\n".join(
    f".c{i} {{ margin: {i % 7}px {i % 5}px; padding: {i % 3}px; color: #{(i * 2654435761) % 0xFFFFFF:06x}; }}"
    for i in range(120)
)
_SCRIPT = """
var _hmt = _hmt || [];
(function() {
  var hm = document.createElement("script");
  hm.src = "/static/stat.js?v=20240301";
  var s = document.getElementsByTagName("script")[0];
  if (s && s.parentNode) { s.parentNode.insertBefore(hm, s); }
})();
function shareTo(target) { window.open("/share?to=" + target + "&url=" + encodeURIComponent(location.href)); }
"""


@dataclass
class ArticleView:
    """Everything a template needs to render one article page."""

    path: str
    title: str
    paragraphs: list[str]  # body paragraphs, banners and promotions included
    date: str  # "2024-03-05 08:30"
    source: str  # the 来源 in the meta line
    author: str  # reporter line, may be empty
    editor: str
    hot: list[tuple[str, str]] = field(default_factory=list)  # (title, path) of other articles
    related: list[tuple[str, str, str]] = field(default_factory=list)  # (title, path, snippet)
    comments: list[tuple[str, str, str]] = field(default_factory=list)  # (user, time, text)
    leads: list[tuple[str, str, str]] = field(default_factory=list)  # (title, path, first sentence) of other stories
    prev: tuple[str, str] | None = None
    next: tuple[str, str] | None = None


@dataclass
class IndexEntry:
    title: str
    path: str
    date: str


class Site:
    """One news site: URL scheme, title habits, templates."""

    key = ""
    name = ""  # site name, shown in the header and in other sites' 来源 lines
    source_name = ""  # how other sites credit it
    encoding = "utf-8"
    per_page = 12
    editors: tuple[str, ...] = ("王丽",)
    promo = ""  # the promotion paragraph this site inserts into reprints
    disclaimer = ""  # a paragraph appended to every article body, if any
    title_style = "【关注】"  # a prefix this site likes to put on reprinted headlines
    originates = True  # False for an aggregator that only reprints
    reprint_weight = 1.0  # how likely this site is to be among a story's reprinters

    def index_path(self, page: int) -> str:
        raise NotImplementedError

    def article_path(self, serial: int, date: str) -> str:
        raise NotImplementedError

    def render_index(self, entries: list[IndexEntry], page: int, pages: int, sites: list[Site]) -> str:
        raise NotImplementedError

    def render_article(self, view: ArticleView, sites: list[Site]) -> str:
        raise NotImplementedError

    # helpers shared by the templates
    def _head(self, title: str, extra: str = "") -> str:
        charset = "gb2312" if self.encoding != "utf-8" else "utf-8"
        return (
            f'<meta http-equiv="Content-Type" content="text/html; charset={charset}">\n'
            f"<title>{escape(title)}</title>\n{extra}"
            f"<style>\n{_CSS}\n</style>\n<script>{_SCRIPT}</script>\n"
        )

    def _friends(self, sites: list[Site]) -> str:
        links = " | ".join(f'<a href="{s.index_path(1)}">{escape(s.name)}</a>' for s in sites if s.key != self.key)
        return f'<div class="friend-links">友情链接：{links}</div>'

    def _pager(self, page: int, pages: int, prev_label: str = "上一页", next_label: str = "下一页") -> str:
        parts = []
        if page > 1:
            parts.append(f'<a href="{self.index_path(1)}">首页</a>')
            parts.append(f'<a href="{self.index_path(page - 1)}">{prev_label}</a>')
        for n in range(max(1, page - 3), min(pages, page + 3) + 1):
            parts.append(f"<b>{n}</b>" if n == page else f'<a href="{self.index_path(n)}">{n}</a>')
        if page < pages:
            parts.append(f'<a href="{self.index_path(page + 1)}">{next_label}</a>')
            parts.append(f'<a href="{self.index_path(pages)}">尾页</a>')
        return " ".join(parts)


def _p(paragraphs: list[str], indent: str = "") -> str:
    return "\n".join(f"<p>{indent}{escape(p)}</p>" for p in paragraphs)


def _hexid(serial: int, salt: str, n: int = 8) -> str:
    return hashlib.md5(f"{salt}:{serial}".encode()).hexdigest()[:n]


class LanjiangDaily(Site):
    """A city newspaper's site: classic two-column layout, indented paragraphs."""

    key = "ljrb"
    per_page = 6
    title_style = "【澜江】"
    name = "澜江日报网"
    source_name = "澜江日报"
    editors = ("王丽", "陈思远", "刘洋")
    promo = "【澜江日报】欢迎关注澜江日报官方微信公众号，每天早上七点，为您推送当天最重要的本地新闻。"

    def index_path(self, page: int) -> str:
        return "/ljrb/index.html" if page == 1 else f"/ljrb/index_{page}.html"

    def article_path(self, serial: int, date: str) -> str:
        return f"/ljrb/content/{date[:7]}/{date[8:10]}/content_{100000 + serial}.htm"

    def _top(self) -> str:
        return (
            '<div id="top"><a href="/ljrb/index.html"><img src="/ljrb/logo.png" alt="澜江日报网"></a>'
            '<span class="slogan">权威 · 主流 · 澜江</span></div>\n'
            '<div class="nav"><a href="/ljrb/index.html">首页</a> <a href="/ljrb/index.html">澜江新闻</a> '
            '<a href="/ljrb/index.html">时政</a> <a href="/ljrb/index.html">经济</a> '
            '<a href="/ljrb/index.html">社会</a> <a href="/ljrb/index.html">文体</a> <a href="/">新闻世界</a></div>'
        )

    def _footer(self, sites: list[Site]) -> str:
        return (
            f'<div id="footer">{self._friends(sites)}'
            "<p>主办：澜江日报社　地址：澜江市解放路88号　新闻热线：0570-12345678</p>"
            "<p>Copyright © 2024 澜江日报社 版权所有　未经书面授权，不得转载、摘编或建立镜像</p>"
            "<p>互联网新闻信息服务许可证编号：00000000000　网站备案号：澜ICP备00000000号</p></div>"
        )

    def render_index(self, entries, page, pages, sites):
        items = "\n".join(
            f'<li><a href="{e.path}" target="_blank">{escape(e.title)}</a><span class="date">{e.date[:10]}</span></li>'
            for e in entries
        )
        return (
            f"<!DOCTYPE html>\n<html><head>{self._head(f'澜江新闻_{self.name}')}</head><body>\n{self._top()}\n"
            f'<div class="main"><div class="crumb">当前位置：<a href="{self.index_path(1)}">首页</a> &gt; 澜江新闻</div>\n'
            f'<ul class="list">\n{items}\n</ul>\n<div class="pager">{self._pager(page, pages)}</div></div>\n'
            f"{self._footer(sites)}\n</body></html>"
        )

    def render_article(self, view, sites):
        hot = "\n".join(f'<li><a href="{p}">{escape(t)}</a></li>' for t, p in view.hot)
        author = f"　作者：{escape(view.author)}" if view.author else ""
        nav = ""
        if view.prev:
            nav += f'<p>上一篇：<a href="{view.prev[1]}">{escape(view.prev[0])}</a></p>'
        if view.next:
            nav += f'<p>下一篇：<a href="{view.next[1]}">{escape(view.next[0])}</a></p>'
        return (
            f"<!DOCTYPE html>\n<html><head>{self._head(view.title + '_' + self.name)}"
            f'<meta property="og:type" content="article">\n<meta property="og:title" content="{escape(view.title)}">\n'
            f"</head><body>\n{self._top()}\n"
            f'<div class="crumb">当前位置：<a href="{self.index_path(1)}">首页</a> &gt; '
            f'<a href="{self.index_path(1)}">澜江新闻</a> &gt; 正文</div>\n'
            f'<div class="wrap"><div class="left">\n<h1 class="title">{escape(view.title)}</h1>\n'
            f'<div class="info">{view.date}:00　来源：{escape(view.source)}{author}</div>\n'
            f'<div class="content" id="ozoom">\n{_p(view.paragraphs, "　　")}\n'
            f'<p class="editor">（责任编辑：{escape(view.editor)}）</p>\n</div>\n'
            '<div class="share">分享到：<a href="javascript:shareTo(\'wx\')">微信</a> '
            "<a href=\"javascript:shareTo('wb')\">微博</a></div>\n"
            f'<div class="prevnext">{nav}</div>\n</div>\n'
            f'<div class="right"><div class="hot"><h3>热门文章</h3><ul>\n{hot}\n</ul></div>\n'
            '<div class="adv"><a href="/ljrb/index.html">订阅2025年《澜江日报》，全年只需三百六十元</a></div></div></div>\n'
            f"{self._footer(sites)}\n</body></html>"
        )


class DonglingNews(Site):
    """A regional news portal: HTML5 layout, an ad box in the article, comments."""

    key = "dlnews"
    per_page = 8
    title_style = "聚焦｜"
    name = "东岭新闻网"
    source_name = "东岭新闻网"
    editors = ("赵敏", "孙浩", "李佳")
    promo = "东岭新闻网推出“东岭号”创作平台，诚邀各界作者入驻，优质原创内容可获得流量扶持和现金奖励，详情请咨询客服。"

    def index_path(self, page: int) -> str:
        return "/dlnews/news/" if page == 1 else f"/dlnews/news/list_{page}.shtml"

    def article_path(self, serial: int, date: str) -> str:
        return f"/dlnews/news/{date[:10].replace('-', '')}/{_hexid(serial, self.key)}.shtml"

    def _header(self) -> str:
        return (
            '<header class="site-header"><div class="logo"><a href="/dlnews/news/">东岭新闻网</a></div>\n'
            '<nav><ul><li><a href="/dlnews/news/">首页</a></li><li><a href="/dlnews/news/">要闻</a></li>'
            '<li><a href="/dlnews/news/">财经</a></li><li><a href="/dlnews/news/">体育</a></li>'
            '<li><a href="/dlnews/news/">科技</a></li><li><a href="/dlnews/news/">文旅</a></li></ul></nav>\n'
            '<form class="search" action="/dlnews/news/"><input name="q" placeholder="搜索新闻"></form></header>'
        )

    def _footer(self, sites: list[Site]) -> str:
        return (
            f'<footer>{self._friends(sites)}<p><a href="/dlnews/news/">关于我们</a> | <a href="/dlnews/news/">广告服务</a> | '
            '<a href="/dlnews/news/">联系我们</a></p>'
            "<p>© 2024 东岭新闻网 版权所有 本站所刊登的各种新闻、信息和各种专题专栏资料，均为东岭新闻网版权所有，"
            "未经协议授权禁止下载使用。</p></footer>"
        )

    def render_index(self, entries, page, pages, sites):
        items = "\n".join(
            f'<div class="news-item"><h3><a href="{e.path}">{escape(e.title)}</a></h3><time>{e.date}</time></div>'
            for e in entries
        )
        return (
            f'<!DOCTYPE html>\n<html lang="zh-CN"><head><meta charset="utf-8">{self._head(self.name + " - 要闻")}</head><body>\n'
            f'{self._header()}\n<main><section class="news-list">\n{items}\n</section>\n'
            f'<div class="pagination">{self._pager(page, pages, "‹ 上页", "下页 ›")}</div></main>\n'
            f"{self._footer(sites)}\n</body></html>"
        )

    def render_article(self, view, sites):
        body = view.paragraphs
        split = min(2, len(body))
        ad = (
            '<div class="ad-box"><span class="ad-tag">广告</span>'
            '<a href="/dlnews/news/">东岭家居节盛大开幕，品牌家具全场低至五折，到店即送精美礼品</a></div>'
        )
        comments = "\n".join(
            f'<div class="comment-item"><span class="user">{escape(u)}</span><time>{t}</time><p>{escape(c)}</p></div>'
            for u, t, c in view.comments
        )
        hot = "\n".join(f'<li><a href="{p}">{escape(t)}</a></li>' for t, p in view.hot)
        author = f'<span class="author">{escape(view.author)}</span>' if view.author else ""
        return (
            f'<!DOCTYPE html>\n<html lang="zh-CN"><head><meta charset="utf-8">{self._head(view.title + " - " + self.name)}'
            f'<meta property="og:type" content="article">\n<meta property="og:title" content="{escape(view.title)}">\n'
            f"</head><body>\n{self._header()}\n<main>\n<article>\n<h1>{escape(view.title)}</h1>\n"
            f'<div class="meta"><time>{view.date}</time><span class="source">来源：{escape(view.source)}</span>{author}</div>\n'
            f'<div class="article-body">\n{_p(body[:split])}\n{ad}\n{_p(body[split:])}\n'
            f'<p class="editor">编辑：{escape(view.editor)}　审核：张海</p>\n</div>\n</article>\n'
            f'<section class="comments"><h3>网友评论（{len(view.comments)}）</h3>\n{comments}\n'
            '<form class="comment-form"><textarea placeholder="文明上网，理性发言"></textarea><button>发表</button></form></section>\n'
            f'</main>\n<aside class="sidebar"><div class="hot"><h3>热门文章</h3><ol>\n{hot}\n</ol></div>\n'
            '<div class="qr">扫码关注东岭新闻网官方微博、微信，第一时间获取东岭资讯</div></aside>\n'
            f"{self._footer(sites)}\n</body></html>"
        )


class NanhuOnline(Site):
    """An old portal in GBK with tables, appending a long disclaimer to every article."""

    key = "nanhu"
    per_page = 5
    title_style = "【关注】"
    name = "南湖在线"
    source_name = "南湖在线"
    encoding = "gbk"
    editors = ("周婷", "吴刚")
    promo = "南湖在线房产频道推出“看房团”活动，每周六免费接送，带您实地探访城南热门楼盘，报名热线0570-66668888。"
    disclaimer = (
        "免责声明：本网站转载的文章、图片、音视频等内容均来源于互联网或合作媒体，转载目的在于传递更多信息，"
        "并不代表本网赞同其观点或对其真实性负责，如因作品内容、版权或其他问题需要同本网联系的，"
        "请在作品发表之日起三十日内与本网联系，本网将在第一时间核实并删除相关内容，联系邮箱为本网首页所公布的投诉邮箱。"
    )

    def index_path(self, page: int) -> str:
        return f"/nanhu/list/{page}.html"

    def article_path(self, serial: int, date: str) -> str:
        return f"/nanhu/a/{date[:4]}/{date[5:7]}{date[8:10]}/{300000 + serial * 7}.html"

    def _top(self) -> str:
        return (
            '<table width="960" align="center" class="top"><tr><td><a href="/nanhu/list/1.html">'
            '<img src="/nanhu/img/logo.gif" alt="南湖在线"></a></td>'
            '<td class="topnav"><a href="/nanhu/list/1.html">新闻</a> | <a href="/nanhu/list/1.html">房产</a> | '
            '<a href="/nanhu/list/1.html">汽车</a> | <a href="/nanhu/list/1.html">论坛</a> | <a href="/">新闻世界</a></td></tr></table>'
        )

    def _footer(self, sites: list[Site]) -> str:
        return (
            f'<table width="960" align="center" class="foot"><tr><td>{self._friends(sites)}'
            "南湖在线 版权所有 Copyright 2003-2024 All Rights Reserved<br>"
            "违法和不良信息举报电话：0570-66661234　举报邮箱：jubao@example.com</td></tr></table>"
        )

    def render_index(self, entries, page, pages, sites):
        rows = "\n".join(
            f'<tr><td class="t">·<a href="{e.path}">{escape(e.title)}</a></td><td class="d">({e.date[5:10]})</td></tr>'
            for e in entries
        )
        return (
            f"<html><head>{self._head(self.name + '-新闻中心')}</head><body>\n{self._top()}\n"
            f'<table width="960" align="center" class="list">\n{rows}\n</table>\n'
            f'<div class="page">{self._pager(page, pages)}</div>\n{self._footer(sites)}\n</body></html>'
        )

    def render_article(self, view, sites):
        hot = "<br>\n".join(f'·<a href="{p}">{escape(t)}</a>' for t, p in view.hot)
        paragraphs = list(view.paragraphs) + [self.disclaimer]
        return (
            f"<html><head>{self._head(view.title + '_' + self.name)}"
            f'<meta property="og:type" content="article">\n<meta property="og:title" content="{escape(view.title)}">\n'
            f"</head><body>\n{self._top()}\n"
            '<table width="960" align="center"><tr><td width="660" valign="top">\n'
            f'<h1 class="biaoti">{escape(view.title)}</h1>\n'
            f'<div class="laiyuan">{view.date}　来源：{escape(view.source)}　编辑：{escape(view.editor)}</div>\n'
            f'<div id="text">\n{_p(paragraphs)}\n</div>\n'
            '<div class="fenxiang">【<a href="javascript:window.print()">打印</a>】【<a href="javascript:window.close()">关闭</a>】</div>\n'
            '</td><td width="300" valign="top" class="side">\n'
            f'<div class="box"><div class="boxtitle">热门文章</div>\n{hot}\n</div>\n'
            '<div class="box"><div class="boxtitle">南湖论坛</div>·<a href="/nanhu/list/1.html">城南新盘交房时间汇总，'
            '业主们都来说说</a><br>·<a href="/nanhu/list/1.html">周末去哪儿？本地十个免费好去处</a></div>\n'
            f"</td></tr></table>\n{self._footer(sites)}\n</body></html>"
        )


class BeichuanInfo(Site):
    """A mobile-first site: <br>-separated paragraphs, 相关推荐 with snippets, comment counts."""

    key = "bczx"
    per_page = 4
    title_style = "刚刚！"
    name = "北川资讯"
    source_name = "北川资讯"
    editors = ("钱多多", "马骁")
    promo = "关注“北川资讯”视频号，观看更多现场视频。转发本文到朋友圈，即可参与抽奖，赢取精美礼品一份。"

    def index_path(self, page: int) -> str:
        return "/bczx/" if page == 1 else f"/bczx/?page={page}"

    def article_path(self, serial: int, date: str) -> str:
        return f"/bczx/p/{date[2:4]}{date[5:7]}{date[8:10]}{serial:05d}.html"

    def _bar(self) -> str:
        return (
            '<div class="m-bar"><a class="back" href="/bczx/">‹</a><span>北川资讯</span>'
            '<a class="app" href="/bczx/">打开APP</a></div>\n'
            '<div class="tabs"><a href="/bczx/">推荐</a><a href="/bczx/">本地</a><a href="/bczx/">视频</a>'
            '<a href="/bczx/">生活</a></div>'
        )

    def _footer(self, sites: list[Site]) -> str:
        return (
            f'<div class="m-foot">{self._friends(sites)}<p>北川资讯 © 2024　'
            '<a href="/bczx/">用户协议</a> · <a href="/bczx/">隐私政策</a></p></div>'
        )

    def render_index(self, entries, page, pages, sites):
        cards = "\n".join(
            f'<a class="card" href="{e.path}"><div class="card-title">{escape(e.title)}</div>'
            f'<div class="card-meta">{e.date[5:16]}</div></a>'
            for e in entries
        )
        more = f'<a class="more" href="{self.index_path(page + 1)}">加载更多</a>' if page < pages else ""
        prev = f'<a class="prev" href="{self.index_path(page - 1)}">上一页</a>' if page > 1 else ""
        return (
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f'{self._head(self.name)}</head><body>\n{self._bar()}\n<div class="feed">\n{cards}\n</div>\n'
            f"{prev}{more}\n{self._footer(sites)}\n</body></html>"
        )

    def render_article(self, view, sites):
        body = "<br><br>\n".join(escape(p) for p in view.paragraphs)
        related = "\n".join(
            f'<li><a href="{p}"><b>{escape(t)}</b><span>{escape(s)}</span></a></li>' for t, p, s in view.related
        )
        comments = "\n".join(
            f'<li class="cmt"><em>{escape(u)}</em> <i>{t[5:]}</i><div>{escape(c)}</div></li>'
            for u, t, c in view.comments
        )
        return (
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f'{self._head(view.title)}<meta property="og:type" content="article">\n'
            f'<meta property="og:title" content="{escape(view.title)}">\n</head><body>\n{self._bar()}\n'
            f'<div class="art"><h1 class="art-title">{escape(view.title)}</h1>\n'
            f'<div class="art-meta"><span>{escape(view.source)}</span> <span>{view.date[5:]}</span></div>\n'
            f'<div class="art-body">\n{body}<br><br>\n责任编辑：{escape(view.editor)}\n</div></div>\n'
            '<div class="open-app">打开北川资讯APP，阅读体验更佳</div>\n'
            f'<div class="related"><h4>相关推荐</h4><ul>\n{related}\n</ul></div>\n'
            f'<div class="cmts"><h4>网友评论（{len(view.comments)}）</h4><ul>\n{comments}\n</ul></div>\n'
            f"{self._footer(sites)}\n</body></html>"
        )


class XiyuanHeadlines(Site):
    """A news aggregator: everything is a reprint with a banner, app promotion under the text."""

    key = "xytt"
    per_page = 5
    title_style = "热点："
    originates = False
    reprint_weight = 3.0
    name = "西原头条"
    source_name = "西原头条"
    editors: tuple[str, ...] = ("小编", "内容运营")
    promo = "下载西原头条APP，新用户注册即送三十天会员，海量新闻资讯随时看，精彩内容不错过。"

    def index_path(self, page: int) -> str:
        return f"/xytt/feed?p={page}"

    def article_path(self, serial: int, date: str) -> str:
        return f"/xytt/a/{6731000000 + serial * 37}"

    def _header(self) -> str:
        return (
            '<div class="hd"><a class="logo" href="/xytt/feed?p=1">西原头条</a>'
            '<div class="channels"><a href="/xytt/feed?p=1">推荐</a> <a href="/xytt/feed?p=1">热点</a> '
            '<a href="/xytt/feed?p=1">本地</a> <a href="/xytt/feed?p=1">财经</a></div>'
            '<a class="login" href="/xytt/feed?p=1">登录</a></div>'
        )

    def _footer(self, sites: list[Site]) -> str:
        return (
            f'<div class="ft">{self._friends(sites)}<span>© 2024 西原头条</span> '
            "<span>本平台内容由用户及合作方发布，不代表平台立场</span></div>"
        )

    def render_index(self, entries, page, pages, sites):
        items = "\n".join(
            f'<div class="feed-item"><a class="feed-title" href="{e.path}">{escape(e.title)}</a>'
            f'<div class="feed-info">{e.date} · 评论</div></div>'
            for e in entries
        )
        return (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">{self._head(self.name + " - 推荐")}</head><body>\n'
            f'{self._header()}\n<div class="feed">\n{items}\n</div>\n'
            f'<div class="pg">{self._pager(page, pages)}</div>\n{self._footer(sites)}\n</body></html>'
        )

    def render_article(self, view, sites):
        hot = "\n".join(f'<li><a href="{p}">{escape(t)}</a></li>' for t, p in view.hot)
        comments = "\n".join(
            f'<div class="c"><b>{escape(u)}</b>：{escape(c)} <span>{t}</span></div>' for u, t, c in view.comments
        )
        return (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">{self._head(view.title + " - " + self.name)}'
            f'<meta property="og:type" content="article">\n<meta property="og:title" content="{escape(view.title)}">\n'
            f"</head><body>\n{self._header()}\n"
            f'<div class="container"><div class="article-box"><h1>{escape(view.title)}</h1>\n'
            f'<div class="article-meta"><span class="src">{escape(view.source)}</span> <span>{view.date}</span></div>\n'
            f'<article class="rich-text">\n{_p(view.paragraphs)}\n</article>\n'
            f'<div class="app-promo"><a href="/xytt/feed?p=1">{escape(self.promo)}</a></div>\n'
            '<div class="report">举报/反馈</div>\n'
            f'<div class="comment-box"><h3>评论 {len(view.comments)}</h3>\n{comments}\n</div></div>\n'
            f'<div class="side"><h3>热门文章</h3><ul>\n{hot}\n</ul></div></div>\n'
            f"{self._footer(sites)}\n</body></html>"
        )


class KuaixunPortal(XiyuanHeadlines):
    """A portal that posts an excerpt of a story, its first paragraphs under a source line,
    minutes before the source site publishes it whole (``build_world(excerpt_every=...)``).
    It reprints nothing else."""

    key = "kx"
    per_page = 8
    name = "江城快讯"
    source_name = "江城快讯"
    editors = ("快讯编辑",)
    promo = "关注江城快讯，本地新闻抢先看，完整报道请见各媒体官网。"
    reprint_weight = 0.0

    def index_path(self, page: int) -> str:
        return f"/kx/list_{page}.html"

    def article_path(self, serial: int, date: str) -> str:
        return f"/kx/{date.replace('-', '')}/{serial:05d}.html"

    def _header(self) -> str:
        return (
            '<div class="hd"><a class="logo" href="/kx/list_1.html">江城快讯</a>'
            '<div class="channels"><a href="/kx/list_1.html">快讯</a> <a href="/kx/list_1.html">本地</a></div></div>'
        )

    def _footer(self, sites: list[Site]) -> str:
        return (
            f'<div class="ft">{self._friends(sites)}<span>© 2024 江城快讯</span> <span>摘编内容以原文为准</span></div>'
        )


def default_sites() -> list[Site]:
    return [LanjiangDaily(), DonglingNews(), NanhuOnline(), BeichuanInfo(), XiyuanHeadlines()]
