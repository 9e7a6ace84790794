"""Sites whose pages are a whole real-looking page with a story put where its article was.

A :class:`Template` is a page cut around its article element: everything else (navigation,
scripts, styles, side columns, footers, the original article's date line) stays as it was.
Rendering puts the story's title in the headline and ``<title>``, its paragraphs in the
article element (marked up as the page marked up its own), and after it a "相关新闻" list of
other stories' headlines and first sentences and a comment block, as Chinese news sites do.
Several :class:`TemplateSite` objects may share one template: sites built on one CMS.

The templates themselves come from elsewhere: the benchmarks cut them from real pages, the
tests write their own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from html import escape
from typing import Any

import lxml.html

from .sites import ArticleView, IndexEntry, Site

# Slot markers: private-use characters that no page contains, kept as text by lxml.
_MARK = "\ue000"
SLOTS = ("head", "page_title", "title", "body", "after")
_HIDDEN = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_CHARSET = re.compile(r"charset\s*=\s*[\"']?\s*(gb2312|gbk|gb18030)", re.IGNORECASE)


@dataclass(frozen=True)
class Template:
    """A page split at its slots: ``parts[i]`` comes before ``slots[i]``, the last part ends it."""

    name: str
    parts: tuple[str, ...]
    slots: tuple[str, ...]
    paragraph: str  # the opening tag of a paragraph, e.g. '<p style="text-indent:2em">', or "<br>"
    encoding: str = "utf-8"  # "gbk" when the page declares a GB charset in a <meta>

    @classmethod
    def from_page(cls, name: str, root: Any, article: Any, headline: Any = None) -> Template:
        """Cut the page ``root`` (an lxml.html tree) around ``article``, the element that held
        its article, and ``headline``, the element that held its title (if any). The tree is
        cut in place.
        """
        paragraph = _paragraph_tag(article)
        for meta in root.xpath('//meta[@property="og:type"]'):
            meta.drop_tree()
        head = root.find("head")
        if head is None:
            head = lxml.html.Element("head")
            root.insert(0, head)
        title = head.find("title")
        if title is None:
            title = lxml.html.Element("title")
            head.append(title)
        for child in list(title):
            title.remove(child)
        title.text = _mark("page_title")
        head.text = _mark("head") + (head.text or "")
        if headline is not None and headline is not article and article not in headline.iterancestors():
            for child in list(headline):
                headline.remove(child)
            headline.text = _mark("title")
        for child in list(article):
            article.remove(child)
        article.text = _mark("body")
        if article.tag in ("td", "th", "li", "dd"):
            article.text += _mark("after")  # no block may follow it in its row: the lists go inside
        else:
            article.tail = _mark("after") + (article.tail or "")
        html = lxml.html.tostring(root, encoding="unicode", method="html", doctype="<!DOCTYPE html>")
        pieces = html.split(_MARK)
        parts, slots = tuple(pieces[0::2]), tuple(pieces[1::2])
        encoding = "gbk" if _CHARSET.search(parts[0] + (parts[1] if len(parts) > 1 else "")) else "utf-8"
        return cls(name, parts, slots, paragraph, encoding)

    @property
    def size(self) -> int:
        return sum(map(len, self.parts))

    def render(self, values: dict[str, str]) -> str:
        out = [self.parts[0]]
        for slot, part in zip(self.slots, self.parts[1:]):
            out.append(values.get(slot, ""))
            out.append(part)
        return "".join(out)


def _mark(slot: str) -> str:
    return f"{_MARK}{slot}{_MARK}"


def _paragraph_tag(article: Any) -> str:
    """How the page marked up its paragraphs: its first text-bearing <p> (attributes and all),
    or <br> breaks when the text sat in the element itself."""
    for p in article.iter("p"):
        if (p.text_content() or "").strip() and not _HIDDEN.search(p.get("style", "")) and p.get("hidden") is None:
            attributes = "".join(f' {k}="{escape(v)}"' for k, v in p.attrib.items())
            return f"<p{attributes}>"
    own = (article.text or "") + "".join(child.tail or "" for child in article)
    if len(own.strip()) > 40 and article.find(".//br") is not None:
        return "<br>"
    return "<p>"


class TemplateSite(Site):
    """A site whose pages are its template with the story in it. ``style`` (0-3) picks how
    its related list and comment block are marked up; sites on one template may differ in it."""

    def __init__(
        self,
        key: str,
        name: str,
        template: Template,
        style: int = 0,
        per_page: int = 20,
        originates: bool = True,
        reprint_weight: float = 1.0,
        encoding: str | None = None,
    ) -> None:
        self.key = key
        self.name = name
        self.source_name = name
        self.template = template
        self.style = style % 4
        self.per_page = per_page
        self.originates = originates
        self.reprint_weight = reprint_weight
        self.encoding = encoding or template.encoding
        digest = int(hashlib.md5(key.encode()).hexdigest()[:8], 16)
        self.editors = (f"编辑{digest % 97:02d}", f"值班编辑{digest % 89:02d}")
        self.title_style = ("【关注】", "热点｜", "最新：", "")[digest % 4]
        self.promo = f"欢迎关注{name}官方账号，获取更多本地新闻。"

    def index_path(self, page: int) -> str:
        return f"/{self.key}/" if page == 1 else f"/{self.key}/index_{page}.html"

    def article_path(self, serial: int, date: str) -> str:
        return f"/{self.key}/{date[:7].replace('-', '')}/t{date.replace('-', '')}_{serial:05d}.html"

    def render_index(self, entries: list[IndexEntry], page: int, pages: int, sites: list[Site]) -> str:
        items = "\n".join(f'<li><a href="{e.path}">{escape(e.title)}</a> <span>{e.date}</span></li>' for e in entries)
        return self.template.render(
            {
                "head": self._charset(),
                "page_title": escape(f"{self.name}_新闻列表"),
                "title": escape(self.name),
                "body": f'<ul class="list">\n{items}\n</ul>',
                "after": f'<div class="page">{self._pager(page, pages)}</div>',
            }
        )

    def render_article(self, view: ArticleView, sites: list[Site]) -> str:
        return self.template.render(
            {
                "head": self._charset() + f'<meta property="og:type" content="article"><meta property="og:title" '
                f'content="{escape(view.title)}">',
                "page_title": escape(f"{view.title}_{self.name}"),
                "title": escape(view.title),
                "body": self._body(view),
                "after": self._related(view) + self._comments(view),
            }
        )

    def _charset(self) -> str:
        return "" if self.encoding == "utf-8" else '<meta http-equiv="Content-Type" content="text/html; charset=gbk">'

    def body_lines(self, view: ArticleView) -> list[str]:
        """The lines rendered into the article element: the paragraphs and a credit line."""
        return [*view.paragraphs, f"（来源：{view.source}　责任编辑：{view.editor}）"]

    def _body(self, view: ArticleView) -> str:
        lines = self.body_lines(view)
        if self.template.paragraph == "<br>":
            return "<br>\n".join(escape(line) for line in lines)
        tag = self.template.paragraph
        return "\n".join(f"{tag}{escape(line)}</p>" for line in lines)

    def _related(self, view: ArticleView) -> str:
        if not view.leads:
            return ""
        if self.style == 0:
            items = "".join(f'<li><a href="{p}">{escape(t)}</a><p>{escape(s)}</p></li>' for t, p, s in view.leads)
            return f'<div class="xgxw"><h3>相关新闻</h3><ul>{items}</ul></div>'
        if self.style == 1:
            items = "".join(
                f'<dl><dt><a href="{p}">{escape(t)}</a></dt><dd>{escape(s)}</dd></dl>' for t, p, s in view.leads
            )
            return f'<div class="related-news"><div class="hd">相关新闻</div>{items}</div>'
        if self.style == 2:
            items = "".join(
                f'<div class="item"><a href="{p}" class="tit">{escape(t)}</a><div class="sum">{escape(s)}</div></div>'
                for t, p, s in view.leads
            )
            return f'<section class="tjyd"><h2>相关新闻</h2>{items}</section>'
        items = "".join(f'<tr><td><a href="{p}">{escape(t)}</a><br>{escape(s)}</td></tr>' for t, p, s in view.leads)
        return f'<table class="xgwz"><tr><th>相关新闻</th></tr>{items}</table>'

    def _comments(self, view: ArticleView) -> str:
        rows = "".join(
            f'<div class="pl-item"><span class="user">{escape(u)}</span> <span class="time">{t}</span>'
            f"<p>{escape(c)}</p></div>"
            for u, t, c in view.comments
        )
        box = ("pinglun", "comment-box", "plbox", "discuss")[self.style]
        return (
            f'<div class="{box}"><h3>网友评论（{len(view.comments)}）</h3>{rows}'
            '<div class="pl-form"><textarea placeholder="文明上网，理性发言"></textarea><a href="#">发表评论</a></div></div>'
        )
