"""Build the news world: every page of every site, and which story each article page tells.

Deterministic: the same stories, sites and seed give byte-identical pages. Each story is
published by one site and reprinted by a few others, each reprint made from the original or
from an earlier reprint (so edits pile up along a chain, as they do on the web).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from html import escape

from .reprint import Draft, make_reprint
from .sites import ArticleView, IndexEntry, KuaixunPortal, Site, default_sites
from .stories import DEFAULT_STORIES, Story

_BASE_TIME = datetime(2024, 3, 1, 6, 0)
_REPORTERS = ("张磊", "李晓梅", "王建新", "刘畅", "陈静", "杨帆", "黄志强", "周雨桐", "吴昊", "郑丽娟")
_USERS = (
    "澜江老李",
    "东岭小王",
    "南湖边的猫",
    "北川网友",
    "西原过客",
    "爱跑步的阿杰",
    "茶山人家",
    "路人甲",
    "一只柠檬",
    "老城区居民",
    "江北打工人",
    "热心市民张先生",
)
_COMMENTS = (
    "说得好，支持！",
    "希望能尽快落实到我们小区。",
    "这个消息好，点赞。",
    "关注了，后续还有报道吗？",
    "我们那边怎么还没有动静？",
    "实实在在的好事，给相关部门点个赞。",
    "转给家里人看看。",
    "说是一回事，做是另一回事，等着看效果。",
    "去年就听说了，终于来了。",
    "小编辛苦了。",
    "有没有具体的时间表？",
    "身边就有这样的例子，确实方便了很多。",
    "希望不要一阵风，要长期坚持下去。",
    "家乡越来越好了。",
    "数据很详细，学习了。",
    "第一次在网上看到我们镇上的新闻。",
)
_QUOTE_INTROS = ("此前已有媒体关注过相关话题。", "类似的情况并非个例。", "记者注意到，早些时候的报道也提到过这一点。")
_QUOTE_OUTROS = ("对此，本报将继续关注。", "这也从一个侧面说明了问题的复杂性。", "两者之间有何关联，仍有待观察。")
_SENTENCE = re.compile(r"[^。！？]+[。！？]")


@dataclass
class World:
    """Every page by path (query string included), the crawl's start pages, and the truth."""

    pages: dict[str, bytes | str]
    start_paths: list[str]
    story_of: dict[str, str]  # article page path -> story id
    stories: dict[str, Story] = field(default_factory=dict)
    site_of: dict[str, str] = field(default_factory=dict)  # article page path -> site key
    edits_of: dict[str, list[str]] = field(default_factory=dict)  # reprint path -> edits applied
    types: dict[str, str] = field(default_factory=dict)  # path -> Content-Type, where the rule below is not it
    published: dict[str, datetime] = field(default_factory=dict)  # article page path -> publication time

    def content_type(self, path: str) -> str:
        """UTF-8 pages say so in the header; the GBK site declares its charset only in <meta>."""
        page = self.pages[path]
        if path in self.types:
            return self.types[path]
        if path.endswith(".txt"):
            return "text/plain; charset=utf-8"
        return "text/html" if isinstance(page, bytes) else "text/html; charset=utf-8"

    def body(self, path: str) -> bytes:
        page = self.pages[path]
        return page if isinstance(page, bytes) else page.encode("utf-8")

    def copies(self) -> dict[str, list[str]]:
        """Story id -> paths of every article page telling it."""
        out: dict[str, list[str]] = {}
        for path, story_id in self.story_of.items():
            out.setdefault(story_id, []).append(path)
        return out


@dataclass
class _Copy:
    story: Story
    site: Site
    when: datetime
    draft: Draft
    source: str
    author: str
    editor: str
    path: str = ""


def _first_sentence(paragraph: str) -> str:
    found = _SENTENCE.match(paragraph)
    return found.group() if found else paragraph[:40]


def _sentences(text: str) -> list[str]:
    return _SENTENCE.findall(text.replace("\n", ""))


def _with_quotes(stories: Sequence[Story], every: int, seed: int) -> list[Story]:
    """Every ``every``-th story gets a paragraph quoting the longest sentence of the story before.

    A hard negative: the two articles share one long sentence and nothing else.
    """
    out = list(stories)
    if every <= 0:
        return out
    for i in range(every - 1, len(out), every):
        if i == 0:
            continue
        quoted = max(_sentences(stories[i - 1].text), key=len, default="")
        if len(quoted) < 20:
            continue
        rng = random.Random(f"{seed}:quote:{stories[i].story_id}")
        paragraph = f"{rng.choice(_QUOTE_INTROS)}“{quoted}”{rng.choice(_QUOTE_OUTROS)}"
        story = out[i]
        out[i] = Story(story.story_id, story.title, story.paragraphs + (paragraph,))
    return out


def _weighted_sample(sites: list[Site], count: int, rng: random.Random) -> list[Site]:
    """``count`` distinct sites, each drawn with probability proportional to its reprint_weight."""
    pool = list(sites)
    chosen: list[Site] = []
    for _ in range(min(count, len(pool))):
        pick = rng.choices(pool, weights=[s.reprint_weight for s in pool])[0]
        pool.remove(pick)
        chosen.append(pick)
    return chosen


def build_world(
    stories: Iterable[Story] | None = None,
    sites: Sequence[Site] | None = None,
    seed: int = 0,
    reprints: tuple[int, int] = (0, 3),
    quote_every: int | None = None,
    per_page: int | None = None,
    excerpt_every: int = 0,
) -> World:
    """Publish every story on one site and reprint it on ``reprints`` (min, max) other sites.

    ``quote_every``: every n-th story quotes a sentence of the previous one (default: off for
    the hand-written stories, which already contain such a quote; 10 for stories passed in).
    ``per_page``: articles per index page on every site (default: each site's own).
    ``excerpt_every``: every n-th story is posted first as an excerpt (its first paragraphs,
    at most 72% of its text, under a source line) by a portal, 5-40 minutes before its origin
    publishes it (default: off).
    """
    given = stories is not None
    story_list = list(stories) if stories is not None else list(DEFAULT_STORIES)
    site_list = list(sites) if sites is not None else default_sites()
    if per_page is not None:
        if per_page < 1:
            raise ValueError(f"per_page must be at least 1, got {per_page}")
        for site in site_list:
            site.per_page = per_page
    if len({s.story_id for s in story_list}) != len(story_list):
        raise ValueError("story ids must be unique")
    if quote_every is None:
        quote_every = 10 if given else 0
    story_list = _with_quotes(story_list, quote_every, seed)
    originators = [s for s in site_list if s.originates] or site_list
    portal = KuaixunPortal()
    low, high = reprints
    high = min(high, len(site_list) - 1)
    low = min(low, high)

    copies: list[_Copy] = []
    for index, story in enumerate(story_list):
        rng = random.Random(f"{seed}:{index}:{story.story_id}")
        origin = originators[(index + seed) % len(originators)]
        when = _BASE_TIME + timedelta(minutes=97 * index + rng.randrange(60))
        author = f"记者 {rng.choice(_REPORTERS)}"
        chain = [
            _Copy(
                story,
                origin,
                when,
                Draft(story.title, list(story.paragraphs)),
                origin.source_name,
                author,
                rng.choice(origin.editors),
            )
        ]
        others = [s for s in site_list if s is not origin]
        original_chars = len(story.text.replace("\n", ""))
        for site in _weighted_sample(others, rng.randint(low, high), rng):
            parent = rng.choice(chain)
            draft = make_reprint(
                parent.draft, original_chars, rng, parent.site.source_name, story.title, site.promo, site.title_style
            )
            if not site.originates and draft.banner is None:
                draft.banner = f"本文来源：{parent.site.source_name}"
            chain.append(
                _Copy(
                    story,
                    site,
                    parent.when + timedelta(minutes=rng.randint(20, 600)),
                    draft,
                    parent.site.source_name,
                    "",
                    rng.choice(site.editors),
                )
            )
        if excerpt_every and index % excerpt_every == excerpt_every - 1:
            chain.append(_excerpt(story, chain[0], portal, random.Random(f"{seed}:{index}:excerpt")))
        copies.extend(chain)

    world = World(pages={}, start_paths=[], story_of={}, stories={s.story_id: s for s in story_list})
    if excerpt_every:
        site_list = [*site_list, portal]
    by_site: dict[str, list[_Copy]] = {site.key: [] for site in site_list}
    for copy in copies:
        by_site[copy.site.key].append(copy)
    for site in site_list:
        listing = sorted(by_site[site.key], key=lambda c: (c.when, c.story.story_id))
        for serial, copy in enumerate(listing, start=1):
            copy.path = site.article_path(serial, copy.when.strftime("%Y-%m-%d"))
            world.story_of[copy.path] = copy.story.story_id
            world.site_of[copy.path] = site.key
            world.published[copy.path] = copy.when
            if copy.draft.edits:
                world.edits_of[copy.path] = list(copy.draft.edits)
        _render_site(world, site, listing, site_list, seed)
    world.start_paths = [site.index_path(1) for site in site_list]
    world.pages["/"] = _portal(site_list)
    world.pages["/robots.txt"] = "User-agent: *\nAllow: /\n"
    return world


def _excerpt(story: Story, origin: _Copy, portal: Site, rng: random.Random) -> _Copy:
    """The portal's excerpt: whole paragraphs from the start, at most 72% of the text."""
    total, kept = sum(map(len, story.paragraphs)), list[str]()
    for paragraph in story.paragraphs:
        if kept and sum(map(len, kept)) + len(paragraph) > 0.72 * total:
            break
        kept.append(paragraph)
    draft = Draft(story.title, kept, banner=f"来源：{origin.site.source_name}（摘编）")
    when = origin.when - timedelta(minutes=rng.randint(5, 40))
    return _Copy(story, portal, when, draft, origin.site.source_name, "", rng.choice(portal.editors))


def _render_site(world: World, site: Site, listing: list[_Copy], sites: list[Site], seed: int) -> None:
    newest_first = listing[::-1]
    pages = max(1, -(-len(newest_first) // site.per_page))
    for page in range(1, pages + 1):
        chunk = newest_first[(page - 1) * site.per_page : page * site.per_page]
        entries = [IndexEntry(c.draft.title, c.path, c.when.strftime("%Y-%m-%d %H:%M")) for c in chunk]
        _put(world, site, site.index_path(page), site.render_index(entries, page, pages, sites))
    for position, copy in enumerate(listing):
        rng = random.Random(f"{seed}:page:{copy.path}")
        others = [c for c in listing if c is not copy]
        hot = rng.sample(others, min(6, len(others)))
        related = rng.sample(others, min(4, len(others)))
        comments = [
            (
                rng.choice(_USERS),
                (copy.when + timedelta(minutes=rng.randint(5, 900))).strftime("%Y-%m-%d %H:%M"),
                rng.choice(_COMMENTS),
            )
            for _ in range(rng.randint(0, 5))
        ]
        view = ArticleView(
            path=copy.path,
            title=copy.draft.title,
            paragraphs=copy.draft.body(),
            date=copy.when.strftime("%Y-%m-%d %H:%M"),
            source=copy.source,
            author=copy.author,
            editor=copy.editor,
            hot=[(c.draft.title, c.path) for c in hot],
            related=[(c.draft.title, c.path, c.draft.paragraphs[0][:36] + "…") for c in related],
            leads=[(c.draft.title, c.path, _first_sentence(c.draft.paragraphs[0])) for c in related],
            comments=comments,
            prev=(listing[position - 1].draft.title, listing[position - 1].path) if position > 0 else None,
            next=(listing[position + 1].draft.title, listing[position + 1].path)
            if position + 1 < len(listing)
            else None,
        )
        _put(world, site, copy.path, site.render_article(view, sites))


def _put(world: World, site: Site, path: str, html: str) -> None:
    world.pages[path] = html if site.encoding == "utf-8" else html.encode(site.encoding, "xmlcharrefreplace")


def _portal(sites: list[Site]) -> str:
    links = "\n".join(f'<li><a href="{s.index_path(1)}">{escape(s.name)}</a></li>' for s in sites)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>新闻世界</title></head><body>\n'
        f"<h1>新闻世界</h1>\n<p>一个本地的新闻小世界，供爬虫示例使用。</p>\n<ul>\n{links}\n</ul>\n</body></html>"
    )
