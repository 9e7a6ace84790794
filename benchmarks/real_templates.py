"""The news world rendered into real page templates, for the extraction and crawl benchmarks.

Real pages come from the shared data: zh-cwce (Chinese pages with hand-copied bodies), en-aeb
(English pages with a checked article body) and zh-gne-testpages (Chinese news pages of about
30 sites). In each page the article element is found (for the first two, the element whose
text matches the hand-copied body best; for the GNE pages, the element holding the most
sentence text outside links, a paragraph's wrapper counting for its parent), and the page
is cut into a ``newsworld.templated.Template``: every other part of the page is kept as it
was. Stories are then rendered into the
templates with a "相关新闻" list and a comment block after the article.

    python benchmarks/real_templates.py            # the templates found, one line each
    python benchmarks/real_templates.py --world    # the make-up of the crawl world

Used by ``extraction.py`` (every template with a long and a short story), ``crawl_rate.py
--world real`` and ``accuracy.py --world real`` (a world of sites built on some templates,
several sites sharing one, stories reprinted across them).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lxml.etree
import lxml.html

from scrapy_neardup.newsworld import Story, build_world
from scrapy_neardup.newsworld.templated import Template, TemplateSite

REPO = Path(__file__).resolve().parent.parent

DEFAULT_DATA = REPO.parent / "shared" / "data"
CORPORA = {
    "zh-cwce": "zh-cwce/zh_cwce.jsonl.gz",
    "en-aeb": "en-aeb/aeb.jsonl.gz",
    "zh-gne": "zh-gne-testpages/gne_testpages.jsonl.gz",
}
# GNE pages whose article element the finder gets wrong (checked by eye): left out.
GNE_LEFT_OUT = {
    "tests/hexun/1.html": "the body is loaded by script; the finder takes the footer",
    "tests/other/1.html": "no article text in the saved page",
    "tests/wechat/2.html": "the finder takes a code block (before: the account's profile box)",
    "tests/toutiao/2.html": "a gallery: 94 characters of caption",
}
MIN_TEMPLATE_F1 = 0.8  # a page whose best element matches its hand-copied body worse is left out

_SPACE = re.compile(r"\s+")
_PUNCT = re.compile(r"[。！？，；、,.!?;]")
_INLINE = frozenset(["a", "b", "strong", "span", "em", "i", "font", "u", "br", "sup", "sub"])
_NOT_CONTENT = ("script", "style", "noscript", "template", "textarea", "select")


@dataclass
class RealPage:
    corpus: str
    page_id: str
    site: str  # the page's own site (its host, or GNE's site folder)
    template: Template
    body_outside: int | None = None  # characters of the page's own body left outside the slot
    sentences_beside: int = 0  # sentence text in the slot's parent and grandparent, outside it


def _records(data: Path, corpus: str) -> Iterator[dict]:
    with gzip.open(data / CORPORA[corpus], "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _bag(text: str) -> Counter:
    return Counter(_SPACE.sub("", text))


def bag_f1(extracted: str, truth: str) -> tuple[float, float, float]:
    """Character-bag precision, recall and F1 of ``extracted`` against ``truth`` (white space left out)."""
    found, wanted = _bag(extracted), _bag(truth)
    shared = sum((found & wanted).values())
    if not shared:
        return 0.0, 0.0, 0.0
    precision, recall = shared / sum(found.values()), shared / sum(wanted.values())
    return precision, recall, 2 * precision * recall / (precision + recall)


def _parse(html: str) -> Any:
    root = lxml.html.document_fromstring(html)
    lxml.etree.strip_elements(root, lxml.etree.Comment, with_tail=False)
    return root


def _visible_text(element: Any) -> str:
    parts = []
    for node in element.iter():
        if not isinstance(node.tag, str) or node.tag in _NOT_CONTENT:
            if node is not element and node.tail:
                parts.append(node.tail)
            continue
        parts.append(node.text or "")
        if node is not element:
            parts.append(node.tail or "")
    return "".join(parts)


def article_by_truth(root: Any, truth: str) -> tuple[Any, float, int]:
    """The element whose text matches ``truth`` best (character-bag F1), that F1, and how
    many other elements, neither inside it nor around it, match it with F1 0.8 or more (a
    second copy of the body, such as a hidden microdata block)."""
    wanted = len(_SPACE.sub("", truth))
    scored = []
    for element in root.iter("div", "article", "section", "td", "main", "span", "font", "body"):
        text = _visible_text(element)
        length = len(_SPACE.sub("", text))
        if 0.5 * wanted <= length <= 3 * wanted:
            scored.append((bag_f1(text, truth)[2], element))
    best, best_f1 = None, 0.0
    for f1, element in scored:
        if f1 > best_f1 or (f1 == best_f1 and best is not None and element in best.iterdescendants()):
            best, best_f1 = element, f1
    if best is None:
        return None, 0.0, 0
    related = {best, *best.iterancestors(), *best.iterdescendants()}
    copies = sum(f1 >= MIN_TEMPLATE_F1 and element not in related for f1, element in scored)
    return best, best_f1, copies


def drop_body_remnants(root: Any, article: Any, truth: str) -> None:
    """Take out the parts of the page's own body that lie outside its article element (a
    lead, a caption, a paragraph after an embedded box): a real page carries one article."""
    body = " ".join(truth.split())
    keep = {article, *article.iterancestors()}
    doomed = []
    for element in root.iter():
        if not isinstance(element.tag, str) or element in keep or element.tag in ("html", "head", "body"):
            continue
        text = " ".join(element.text_content().split())
        if len(text) >= 40 and text in body:
            doomed.append(element)
    for element in doomed:
        if element.getparent() is not None and not any(a in doomed for a in element.iterancestors()):
            element.drop_tree()


def _own_text(element: Any) -> str:
    parts = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str) and child.tag in _INLINE:
            parts.append(child.text_content())
        parts.append(child.tail or "")
    return "".join(parts)


def article_by_sentences(root: Any) -> Any:
    """The element that holds the most sentence text outside links (paragraphs, and a <div>
    or <section> wrapping one among others, count for their parent): the GNE pages have no
    hand-copied body."""
    held: Counter = Counter()
    longest: Counter = Counter()  # each element's longest paragraph
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag in _NOT_CONTENT:
            continue
        text = _own_text(element).strip()
        if len(text) < 20 or not _PUNCT.search(text):
            continue
        if sum(len(a.text_content()) for a in element.iter("a")) > 0.3 * len(text):
            continue
        target = element.getparent() if element.tag in ("p", "h1", "h2", "h3", "h4", "h5", *_INLINE) else element
        while target is not None and target.tag in ("span", "strong", "b", "font", "center"):
            target = target.getparent()
        if target is not None:
            chars = len(_SPACE.sub("", text))
            held[target] += chars
            longest[target] = max(longest[target], chars)
    for wrapper in [e for e in held if _paragraph_wrapper(e, longest[e], held)]:
        held[wrapper.getparent()] += held.pop(wrapper)
    return held.most_common(1)[0][0] if held else None


def _paragraph_wrapper(element: Any, paragraph: int, held: Counter) -> bool:
    """Whether ``element`` is a <div> or <section> holding one paragraph and nothing else,
    beside other paragraphs that together hold at least as much (163's ``<div><p>``, a
    TRS_Editor's ``<div>`` lines, WeChat's ``<section>``): it counts for its parent, as a
    <p> does, so that the article element is the container of all the paragraphs. An
    article of ``<br>`` lines beside a caption is no wrapper: it holds most of the text."""
    parent = element.getparent()
    if element.tag not in ("div", "section") or parent is None or parent.tag == "body":
        return False
    if len(_SPACE.sub("", _visible_text(element))) > 1.1 * paragraph + 10:
        return False
    beside = held[parent] + sum(held[sibling] for sibling in parent if sibling is not element)
    return held[element] <= beside


def headline_of(root: Any, article: Any) -> Any:
    """The page's headline: an <h1> outside the article, preferring one the <title> repeats."""
    title = _SPACE.sub("", root.findtext(".//title") or "")
    heads = [
        h
        for h in root.iter("h1")
        if article not in h.iterancestors() and h not in article.iterancestors() and _SPACE.sub("", h.text_content())
    ]
    for head in heads:
        if _SPACE.sub("", head.text_content()) in title:
            return head
    return heads[0] if heads else None


def load_templates(
    data: Path = DEFAULT_DATA, corpora: tuple[str, ...] = tuple(CORPORA)
) -> tuple[list[RealPage], list[str]]:
    """Every usable page of the corpora as a template, and a line for each page left out."""
    pages: list[RealPage] = []
    left_out: list[str] = []
    for corpus in corpora:
        for record in _records(data, corpus):
            page_id = record["id"]
            if page_id in GNE_LEFT_OUT:
                left_out.append(f"{corpus} {page_id}: {GNE_LEFT_OUT[page_id]}")
                continue
            try:
                root = _parse(record["html"])
            except (lxml.etree.ParserError, ValueError) as exc:
                left_out.append(f"{corpus} {page_id}: cannot parse ({exc})")
                continue
            if record.get("text"):
                article, f1, copies = article_by_truth(root, record["text"])
                if article is None or f1 < MIN_TEMPLATE_F1:
                    left_out.append(f"{corpus} {page_id}: no element matches the body (best F1 {f1:.2f})")
                    continue
                if copies:
                    left_out.append(f"{corpus} {page_id}: the body is on the page twice")
                    continue
                drop_body_remnants(root, article, record["text"])
            else:
                article = article_by_sentences(root)
                if article is None:
                    left_out.append(f"{corpus} {page_id}: no article element found")
                    continue
            site = record.get("site") or _host(record.get("url", "")) or page_id
            # The page's own links point to its own site, not into the world the crawl walks.
            root.make_links_absolute(
                record.get("url") or f"https://{site.split('/')[0]}.example.com/", handle_failures="discard"
            )
            name = f"{corpus}:{page_id}"
            body_outside = _body_outside(root, article, record.get("text") or record.get("gne_text") or "")
            beside = _sentences_beside(article)
            template = Template.from_page(name, root, article, headline_of(root, article))
            pages.append(RealPage(corpus, page_id, site, template, body_outside, beside))
    return pages, left_out


def _body_outside(root: Any, article: Any, truth: str) -> int | None:
    """Characters of the truth's lines (of 10 characters or more) that the page still shows
    outside its article element: the page's own story left around the slot. None without a
    truth (GNE gives its own extraction for a third of its pages)."""
    if not truth:
        return None
    inside = {*article.iterdescendants()}
    parts = []
    for node in root.iter():
        if node in inside:
            continue
        if node is not article and isinstance(node.tag, str) and node.tag not in _NOT_CONTENT:
            parts.append(node.text or "")
        parts.append(node.tail or "")
    page = _SPACE.sub("", "".join(parts))
    lines = {_SPACE.sub("", line) for line in truth.splitlines()}
    return sum(len(line) for line in lines if len(line) >= 10 and line in page)


def _sentences_beside(article: Any) -> int:
    """Sentence text (as the finder counts it) in the article element's parent and
    grandparent but outside the element: a paragraph of the page's own story left beside
    the slot, or a side column, a related list, comments."""
    around = article.getparent()
    if around is not None and around.getparent() is not None and around.getparent().tag != "html":
        around = around.getparent()
    if around is None:
        return 0
    inside = {article, *article.iterdescendants()}
    total = 0
    for element in around.iter():
        if not isinstance(element.tag, str) or element.tag in _NOT_CONTENT or element in inside:
            continue
        text = _own_text(element).strip()
        if len(text) >= 20 and _PUNCT.search(text):
            total += len(_SPACE.sub("", text))
    return total


def _host(url: str) -> str:
    return url.split("/")[2] if url.count("/") >= 2 else ""


# -- stories ---------------------------------------------------------------------------------


def corpus_stories(data: Path, count: int, short_share: float = 0.2, seed: int = 0) -> list[Story]:
    """``count`` stories of the People's Daily corpus: a ``short_share`` of single short
    articles (100-300 characters), the rest consecutive articles joined to 1,000-1,500."""
    rng = random.Random(seed)
    records = list(_pd_records(data))
    stories: list[Story] = []
    index = 0
    while len(stories) < count and index < len(records):
        record = records[index]
        index += 1
        paragraphs = [p.strip() for p in record["text"].split("\n") if p.strip()]
        chars = sum(map(len, paragraphs))
        title = record["title"].strip() or paragraphs[0][:20]
        if rng.random() < short_share:
            if 100 <= chars <= 300:
                stories.append(Story(f"{record['id']}", title, tuple(paragraphs)))
            continue
        target = rng.randint(1000, 1500)
        while chars < target and index < len(records):
            more = [p.strip() for p in records[index]["text"].split("\n") if p.strip()]
            index += 1
            paragraphs += more
            chars += sum(map(len, more))
        stories.append(Story(f"{record['id']}", title, tuple(paragraphs)))
    return stories


def _pd_records(data: Path) -> Iterator[dict]:
    with gzip.open(data / "zh-pd199801" / "pd199801_dev.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("text", "").strip():
                yield record


# -- the two uses --------------------------------------------------------------------------


def extraction_pages(
    templates: list[RealPage], stories: list[Story], seed: int = 0
) -> Iterator[tuple[RealPage, Story, str, str]]:
    """Each template with one long and one short story: (page, story, html, the text put in
    its article element)."""
    from scrapy_neardup.newsworld.sites import ArticleView

    rng = random.Random(seed)
    longs = [s for s in stories if len(s.text) > 600]
    shorts = [s for s in stories if len(s.text) <= 300]
    for number, page in enumerate(templates):
        site = TemplateSite(f"t{number}", f"站点{number}", page.template, style=number)
        for story in (rng.choice(longs), rng.choice(shorts)):
            others = rng.sample(stories, 4)
            view = ArticleView(
                path=f"/t{number}/{story.story_id}.html",
                title=story.title,
                paragraphs=list(story.paragraphs),
                date="2024-03-05 08:30",
                source=site.name,
                author="",
                editor=site.editors[0],
                leads=[
                    (o.title, f"/t{number}/{o.story_id}.html", o.paragraphs[0].split("。")[0] + "。") for o in others
                ],
                comments=[
                    ("网友", "2024-03-05 09:10", "支持，希望尽快落实。"),
                    ("路人", "2024-03-05 10:02", "说得好。"),
                ],
            )
            yield page, story, site.render_article(view, []), "\n".join(site.body_lines(view))


def crawl_sites(templates: list[RealPage], families: int = 24, shared: int = 10, seed: int = 0) -> list[TemplateSite]:
    """Sites for a crawl world: ``families`` templates (Chinese ones first, some English), of
    which ``shared`` carry two sites each, as sites built on one CMS do."""
    rng = random.Random(seed)
    chinese = [t for t in templates if t.corpus != "en-aeb"]
    english = [t for t in templates if t.corpus == "en-aeb"]
    rng.shuffle(chinese)
    rng.shuffle(english)
    chosen = chinese[: families - families // 6] + english[: families // 6]
    sites = []
    for number, page in enumerate(chosen):
        copies = 2 if number < shared else 1
        for copy in range(copies):
            key = f"s{number:02d}{'ab'[copy]}"
            sites.append(
                TemplateSite(
                    key,
                    f"{page.site}{'甲乙'[copy]}网",
                    page.template,
                    style=number + copy,
                    originates=number % 5 != 4,
                    reprint_weight=2.0 if number % 5 == 4 else 1.0,
                )
            )
    return sites


def real_world(data: Path = DEFAULT_DATA, stories: int = 300, reprints: tuple[int, int] = (3, 4), seed: int = 0) -> Any:
    """The crawl world on real templates: ``stories`` stories (a fifth of them short)
    published on one site each and reprinted on ``reprints`` others."""
    templates, _ = load_templates(data)
    return build_world(
        stories=corpus_stories(data, stories, seed=seed),
        sites=crawl_sites(templates, seed=seed),
        seed=seed,
        reprints=reprints,
        per_page=20,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--world", action="store_true", help="describe the crawl world instead")
    parser.add_argument("--stories", type=int, default=300)
    args = parser.parse_args(argv)
    if args.world:
        world = real_world(args.data, args.stories)
        sizes = [len(world.body(p)) for p in world.story_of]
        short = sum(len(s.text) <= 300 for s in world.stories.values())
        print(
            f"{len(world.stories)} stories ({short} short), {len(world.story_of)} article pages on "
            f"{len(set(world.site_of.values()))} sites, {len(world.pages)} pages in all; article page "
            f"{statistics.median(sizes) / 1024:.0f} KB median, {statistics.mean(sizes) / 1024:.0f} KB mean"
        )
        return 0
    templates, left_out = load_templates(args.data)
    for page in templates:
        t = page.template
        print(
            f"{page.corpus:8} {page.page_id[:40]:40} {page.site[:24]:24} {t.size / 1024:6.0f} KB  "
            f"{t.paragraph[:30]:30} body outside {'-' if page.body_outside is None else page.body_outside:>5} "
            f"sentences beside {page.sentences_beside:5}"
        )
    print(
        f"\n{len(templates)} templates ({', '.join(f'{c} {n}' for c, n in Counter(p.corpus for p in templates).items())}); "
        f"{len(left_out)} pages left out:"
    )
    for line in left_out:
        print(f"  {line}")
    checked = [p.body_outside for p in templates if p.body_outside is not None]
    print(
        f"\nthe page's own body left outside the slot (lines of its hand copy, or of GNE's output, still on the "
        f"page): at most {max(checked)} characters on the {len(checked)} templates that have one"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
