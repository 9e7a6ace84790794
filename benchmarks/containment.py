"""Texts that share much but are other stories, and excerpts that are the same story.

Four families, made here from the People's Daily corpus (single-story articles only: one
dateline at most, no signed letters, no other item joined after a closing line or a picture
title, see :func:`single_story`, and no briefs side by side under one dateline, see
:func:`several_briefs`) and from the report templates of ``templates.py``:

- excerpts: a portal's excerpt of an article, its lead paragraphs holding 20-60% of the
  article's content (cut at a sentence end) under a "来源：… 原标题：…" line, and the complete
  article. One story: each order should find the second a duplicate of the first. Each text
  has a headline, as an item's title field gives it: the article its own, the excerpt the
  article's (half of them) or one the portal wrote (its lead's first words); a quoted story
  or a digest item its own, a commentary its own article's, a digest its date line
  (``--no-titles``: none, as a stream without titles).
- quotes: a commentary on its own subject (an article giving none of the story's rare names),
  written around one whole short story it quotes (most often in its middle, sometimes at its
  start or end), with at least as much text of its own as the story; and the story alone,
  a share of them (``--declared``, half by default) as a portal's repost under a "来源：…
  原标题：…" line of their own, as excerpts are. Other stories, in either order.
- digests: a roundup ("新闻早班车") carrying 3-8 short stories in full under headings of
  several styles (or none), and each of those stories alone, a share of them under a
  repost's head as above. Other stories, in either order.
- template reports: reports of six kinds written from one template each with other facts
  (place, date, figures, names): none a duplicate of another; and reposts of some of them
  (a source line, an editor line, commas changed), each to be matched to its own report.

Every family is checked as a stream in arrival order (batches of 64, as ``neardup dedup``),
once with each document of a pair first. Printed: the floors of issue 29 and the figures.

    python benchmarks/containment.py --data ../shared/data                 # memory://
    python benchmarks/containment.py --store leveldb:///tmp/containment-bench --seed 1 2
    python benchmarks/containment.py --seed 25 --missed      # each excerpt pair missed, and why
    python benchmarks/containment.py --seed 1 2 3 4 --pool   # the rule on every article of the pool
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rjieba
import templates
from reprints import DEFAULT_DATA, EDITORS, SITES, _overlaps, load_articles

from scrapy_neardup import DUPLICATE, Detector, Fingerprinter, open_store
from scrapy_neardup.engine.samestory import judge
from scrapy_neardup.fingerprints.text import content_chars
from scrapy_neardup.newsworld import transforms

FLOOR_EXCERPT = 0.95  # recognised each way
FLOOR_AGREE = 0.95  # the two orders agree
CEILING_QUOTE = 0.005  # quoting texts and digests called duplicates
CEILING_TEMPLATE = 0.005  # template reports called duplicates of another report
FLOOR_REPOST = 0.97  # reposts matched to their own report
FLOOR_LONGEST = 0.95  # with longest, the complete article replaces its excerpt (20-95%)
LONGEST_SHARE = (0.20, 0.95)

EXCERPT_SHARE = (0.20, 0.60)
DECLARED = 0.5  # quoted stories and digest items standing alone as a portal's repost (原标题)
KEPT_TITLE = 0.5  # excerpts headlined with their article's title; the others with the portal's own
PORTAL_TITLE_CHARS = 18  # a portal's own headline: its lead's first words
DIGEST_ITEMS = (3, 8)
MEAN_DELAY = 20.0  # documents between the two of a pair, on average
_DATELINE = re.compile(r"(本报|新华社|中新社)[^，。：]{0,16}(电|讯)")
# A story's closing line (names, places, a date, 摄 or 电 in brackets: no latin letters, no
# punctuation) or a picture item's title (图片, 附图片１张), at the end of a paragraph.
_ITEM_END = re.compile(r"（[\u4e00-\u9fff〈〉·\uff10-\uff19]{2,30}）$")
_PICTURE_TITLE = re.compile(r"（附?图片[\uff10-\uff19]*张?）$")
# A section of a longer text: a chapter or an article of a law, a numbered part of a decree or a feature.
_SECTION = re.compile(r"^(第[一二三四五六七八九十百零〇]+[章节条]|[一二三四五六七八九十]+、)")
SENTENCE_CHARS = 5  # content characters of the shortest sentence that counts as one
# A paragraph opening a news brief of its own: a subject (no date in it), then the day of its news.
_BRIEF_OPENING = re.compile(r"^([^，。：；“”\d\uff10-\uff19]{2,30}?)[\uff10-\uff19\d]{1,2}日")
BRIEFS = 2  # briefs of their own past the first paragraph that make a record a roundup of briefs
NAME_TAGS = ("nr", "ns", "nt", "nz")  # jieba's tags of people, places, organisations, other proper names
RARE_NAME = 0.02  # a name in fewer than this share of the corpus records is a story's own, not 中国 or 北京


@dataclass
class Doc:
    key: str
    text: str
    time: float
    pair: int = -1  # the pair it belongs to (excerpts, quotes, digests), -1 for reports
    role: str = ""  # excerpt | complete | story | quoting | digest | report | repost
    report: str = ""  # a report's own key (reports and reposts)


def single_story(text: str) -> bool:
    """An article that is one story: one dateline at most, no letters signed "———name", and no
    item joined after it. The corpus's article boundaries were recovered from line shapes, and
    some records hold a story then another item: a paragraph other than the first and the last
    ending in a story's closing line (a byline, a dateline or a photo credit in brackets,
    "（王黎明）", "（本报珀斯１月９日电）") or a picture item's title ("……（图片）",
    "……（附图片１张）") has more text after it, another story; a last paragraph that is a
    picture item's title is the next item's."""
    paragraphs = text.split("\n")
    return (
        len(_DATELINE.findall(text)) <= 1
        and "——" not in text
        and not any(_ITEM_END.search(paragraph) for paragraph in paragraphs[1:-1])
        and not (len(paragraphs) > 1 and _PICTURE_TITLE.search(paragraphs[-1]))
    )


def names_of(text: str) -> set[str]:
    """The proper names of two characters or more that jieba's tagger finds in a text."""
    return {word for word, flag in rjieba.tag(text) if flag[:2] in NAME_TAGS and len(word) >= 2}


def several_briefs(text: str) -> bool:
    """A record of several news briefs under the first one's dateline (an agency's world news in
    brief: "伊朗总统哈塔米８日……", then "越南共产党……中央政治局６日决定……", "摩洛哥新一届两院制议会
    ７日……"): BRIEFS paragraphs or more past the first open with a subject named nowhere before
    them and the day of their news. :func:`single_story` counts datelines, and such a record has
    one: its "complete article" goes on with other stories after its lead, a roundup."""
    paragraphs = text.split("\n")
    briefs = 0
    for at in range(1, len(paragraphs)):
        opening = _BRIEF_OPENING.match(paragraphs[at])
        subject = names_of(opening.group(1)) if opening else set()
        before = "\n".join(paragraphs[:at])
        briefs += bool(subject) and not any(name in before for name in subject)
    return briefs >= BRIEFS


class RareNames:
    """Which proper names are rare in a set of records (named in fewer than RARE_NAME of them):
    a story's people, places and organisations, not the country or the capital most name."""

    def __init__(self, records: list[dict]) -> None:
        self.counts = Counter(name for record in records for name in names_of(record["text"]))
        self.limit = RARE_NAME * len(records)

    def shared(self, one: str, other: str) -> set[str]:
        """The rare names both texts give."""
        return {name for name in names_of(one) & names_of(other) if self.counts[name] < self.limit}


def left_out_sentence(excerpt: str, article: str) -> bool:
    """Whether the article goes on after its excerpt with at least a sentence (text ending in
    。！？): an excerpt whose article adds only a byline, a dateline or a title line leaves out
    nothing of the story, so there is nothing for the complete article to add."""
    rest = article[len(lead_of(excerpt, article)) :]
    return any(_content_length(s) >= SENTENCE_CHARS and s[-1] in "。！？" for s in transforms.sentences(rest))


def lead_of(excerpt: str, article: str) -> str:
    """The excerpt's body: the lines after its 来源/原标题 head, the article's first part."""
    lines = excerpt.split("\n")
    while lines and not article.startswith("\n".join(lines)):
        lines = lines[1:]
    return "\n".join(lines)


def _content_length(text: str) -> int:
    return len(content_chars(text))


def lead(text: str, share: float) -> str:
    """The article's first sentences, in their paragraphs, until they hold ``share`` of its
    content characters."""
    total = _content_length(text)
    kept: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for sentence in transforms.sentences(paragraph):
            line += sentence
            if _content_length("\n".join([*kept, line])) >= share * total:
                return "\n".join([*kept, line])
        kept.append(line)
    return "\n".join(kept)


def _pools(data: Path, rng: random.Random) -> tuple[list[dict], list[dict]]:
    """Single-story articles: long ones (for excerpts and commentaries) and short ones (quoted
    stories and digest items), each used once, in a shuffled order. A record titled by a
    section heading ("第二章……", "第九条……", "十五、……") is a piece of a longer text (a law, a
    decree, a feature in parts) that the boundary recovery cut off, not a story: two pieces of
    one decree in a digest are one story told in two places."""
    articles = load_articles(data)
    excluded, _ = _overlaps(articles)
    usable = [
        a
        for i, a in enumerate(articles)
        if i not in excluded and single_story(a["text"].strip()) and not _SECTION.match(a["title"])
    ]
    longs = [
        a
        for a in usable
        if 500 <= len(a["text"]) <= 3000 and len(transforms.sentences(a["text"].replace("\n", ""))) >= 5
    ]
    shorts = [a for a in usable if 120 <= len(a["text"]) <= 500]
    rng.shuffle(longs)
    rng.shuffle(shorts)
    return longs, shorts


def excerpt_pairs(
    longs: list[dict],
    rng: random.Random,
    count: int,
    shares: tuple[float, float] = EXCERPT_SHARE,
    titles: Titles | None = None,
) -> list[tuple[str, str, float]]:
    """(excerpt, complete article, share of the article's content in the excerpt). With
    ``titles``, each text's headline is noted there (:class:`Titles`)."""
    pairs = []
    for article in longs[:count]:
        text = article["text"].strip()
        share = rng.uniform(*shares)
        body = lead(text, share)
        source = rng.choice([s[1] for s in SITES])
        head = rng.choice(
            [
                f"来源：{source}  原标题：{article['title']}",
                f"来源：{source}",
                f"原标题：{article['title']}\n来源：{source}",
            ]
        )
        pairs.append((f"{head}\n{body}", text, _content_length(body) / max(1, _content_length(text))))
        if titles is not None:
            titles.excerpt(pairs[-1][0], body, text, article["title"])
    return pairs


class Titles:
    """Each text's headline, as an item's title field would give it, by its text. The choices
    have a generator of their own, so that titles change no other draw."""

    def __init__(self, seed: int, enabled: bool = True) -> None:
        self.rng = random.Random(seed)
        self.enabled = enabled
        self.of: dict[str, str] = {}

    def note(self, text: str, title: str) -> None:
        self.of[text] = title

    def excerpt(self, excerpt: str, body: str, article: str, title: str) -> None:
        """An article keeps its title; its excerpt has that title, or one the portal wrote."""
        self.note(article, title)
        kept = self.rng.random() < KEPT_TITLE
        self.note(excerpt, title if kept else transforms.sentences(body)[0][:PORTAL_TITLE_CHARS])

    def __call__(self, text: str) -> str | None:
        return self.of.get(text) if self.enabled else None


def repost_head(title: str, rng: random.Random) -> str:
    """A portal's head naming the original title (来源：…  原标题：…), in one of two orders."""
    source = rng.choice([s[1] for s in SITES])
    return rng.choice([f"来源：{source}  原标题：{title}", f"原标题：{title}\n来源：{source}"])


def declared(story: dict, rng: random.Random, share: float) -> str:
    """The story's text alone, as a portal's repost under its own head for ``share`` of them:
    a text that declares itself a repost, as an excerpt does, and is quoted or collected
    whole elsewhere. ``rng`` is the heads' own, so the other families are drawn alike."""
    text = story["text"].strip()
    return f"{repost_head(story['title'], rng)}\n{text}" if rng.random() < share else text


QUOTE_INTROS = ["近日，一则新闻引起了笔者的注意：", "据媒体报道：", "先来看一则报道。", "读报时看到这样一条消息："]
QUOTE_OUTROS = ["读罢这则消息，笔者想到的却是另一件事。", "这条新闻让人感慨良多。", "由此说开去。"]


def quote_pairs(
    longs: list[dict],
    shorts: list[dict],
    rng: random.Random,
    count: int,
    reserve: list[dict] | None = None,
    heads: tuple[random.Random, float] | None = None,
    titles: Titles | None = None,
) -> list[tuple[str, str, str]]:
    """(the story alone, the commentary quoting it whole, where the quote sits: start, middle,
    end). With ``heads`` (their generator, the share), the story alone is a repost under its
    own head for that share (:func:`declared`); the commentary quotes its text.
    The commentary's own text is an article on another subject, at least as long as the story:
    one that gives none of the story's rare names (:class:`RareNames`). An article drawn that
    gives one (the same event reported from another side, the same province's policy) is
    replaced by the first of ``reserve`` that gives none; the draws stay those of the article
    drawn, so that the families drawn after the quotes are drawn alike."""
    reserve = reserve or []
    rare = RareNames(longs + shorts + reserve)
    spare = iter(reserve)
    pairs = []
    for story, own in zip(shorts[:count], longs[:count]):
        story_text, own_paragraphs = story["text"].strip(), own["text"].strip().split("\n")
        if _content_length(own["text"]) < _content_length(story_text):
            continue
        draw = rng.random()
        where = "start" if draw < 0.15 else "end" if draw < 0.30 else "middle"
        at = (
            0
            if where == "start"
            else len(own_paragraphs)
            if where == "end"
            else rng.randint(1, max(1, len(own_paragraphs) - 1))
        )
        if rare.shared(story_text, own["text"]):
            own = next(
                (
                    other
                    for other in spare
                    if _content_length(other["text"]) >= _content_length(story_text)
                    and not rare.shared(story_text, other["text"])
                ),
                None,
            )
            if own is None:
                continue
            own_paragraphs = own["text"].strip().split("\n")
            at = (
                0
                if where == "start"
                else len(own_paragraphs)
                if where == "end"
                else min(at, max(1, len(own_paragraphs) - 1))
            )
        quoted = [rng.choice(QUOTE_INTROS), story_text, rng.choice(QUOTE_OUTROS)]
        paragraphs = own_paragraphs[:at] + quoted + own_paragraphs[at:]
        alone = declared(story, *heads) if heads else story_text
        pairs.append((alone, "\n".join(paragraphs), where))
        if titles is not None:
            titles.note(alone, story["title"])
            titles.note(pairs[-1][1], own["title"])
    return pairs


def _heading(style: str, number: int, title: str) -> str:
    return {"number": f"{number}. {title}", "bracket": f"【{title}】", "square": f"■{title}", "none": ""}[style]


def digest_groups(
    shorts: list[dict],
    rng: random.Random,
    count: int,
    heads: tuple[random.Random, float] | None = None,
    titles: Titles | None = None,
) -> list[tuple[str, list[str]]]:
    """(the digest, the stories it carries in full, each as it stands alone: with ``heads``, a
    repost under its own head for that share, :func:`declared`). No story is more than half of
    its digest: the rest is the digest's own text, other stories, at least as much as the story."""
    groups = []
    at = 0
    for _ in range(count):
        size = rng.randint(*DIGEST_ITEMS)
        items = shorts[at : at + size]
        while len(items) >= 2 and max(map(_content_length, (i["text"] for i in items))) > 0.5 * sum(
            _content_length(i["text"]) for i in items
        ):
            if at + len(items) >= len(shorts):  # the pool is used up: no digest can be made
                items = []
                break
            items = items + shorts[at + len(items) : at + len(items) + 1]
        at += len(items)
        if len(items) < DIGEST_ITEMS[0]:
            break
        style = rng.choice(["number", "bracket", "square", "none"])
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        lines = [
            rng.choice(
                [f"【新闻早班车】{month}月{day}日", f"{month}月{day}日新闻摘要", f"早安！{month}月{day}日要闻速览"]
            )
        ]
        for i, item in enumerate(items, 1):
            heading = _heading(style, i, item["title"])
            lines += ([heading] if heading else []) + [item["text"].strip()]
        lines.append(rng.choice(["（本期编辑：王某）", "以上为今日要闻，明天见。", ""]))
        alone = [declared(item, *heads) if heads else item["text"].strip() for item in items]
        groups.append(("\n".join(line for line in lines if line), alone))
        if titles is not None:
            titles.note(groups[-1][0], lines[0])
            for item, text in zip(items, alone):
                titles.note(text, item["title"])
    return groups


def _stream(pairs: list[tuple[str, str]], rng: random.Random, prefix: str, roles: tuple[str, str]) -> list[Doc]:
    """Each pair's first text, then its second ``MEAN_DELAY`` documents later on average,
    pairs interleaved."""
    docs = []
    for number, (first, second) in enumerate(pairs):
        when = float(number)
        docs.append(Doc(f"{prefix}/{number}-a", first, when, number, roles[0]))
        docs.append(
            Doc(f"{prefix}/{number}-b", second, when + 0.01 + rng.expovariate(1.0 / MEAN_DELAY), number, roles[1])
        )
    docs.sort(key=lambda d: d.time)
    return docs


def report_streams(rng: random.Random, per_kind: int, reposts: float) -> tuple[list[Doc], list[Doc]]:
    """Reports of every kind, each with other facts, some reposted: once with each repost after
    its report, once before it."""
    made: list[tuple[str, str, str | None]] = []  # (key, text, repost text)
    seen: set[str] = set()
    for kind in templates.KINDS:
        for number in range(per_kind):
            text = kind.make(rng)
            if text in seen:
                continue
            seen.add(text)
            site, editor = rng.choice(SITES)[1], rng.choice(EDITORS)
            copy = templates.repost(text, rng, site, editor) if rng.random() < reposts else None
            made.append((f"{kind.name}/{number}", text, copy))
    rng.shuffle(made)
    streams = []
    for repost_first in (False, True):
        docs = []
        for at, (key, text, copy) in enumerate(made):
            docs.append(Doc(key, text, float(at), role="report", report=key))
            if copy is not None:
                later = float(at) + 0.01 + rng.expovariate(1.0 / MEAN_DELAY)
                docs.append(
                    Doc(f"{key}-repost", copy, float(at) - 0.005 if repost_first else later, role="repost", report=key)
                )
        docs.sort(key=lambda d: d.time)
        streams.append(docs)
    return streams[0], streams[1]


def check(
    docs: list[Doc],
    store_uri: str,
    fingerprinter: Fingerprinter,
    prefer: str | None = None,
    titles: Titles | None = None,
) -> list:
    """Every document's verdict in arrival order, in a new namespace, batches of 64, each with
    its headline from ``titles``."""
    from scrapy_neardup.engine.prefer import policy_from

    with open_store(store_uri, f"containment-{uuid.uuid4().hex[:8]}", fingerprinter.recipe) as store:
        detector = Detector(store, fingerprinter=fingerprinter, prefer=policy_from(prefer) if prefer else None)
        verdicts = []
        for start in range(0, len(docs), 64):
            chunk = docs[start : start + 64]
            verdicts += detector.check_many(
                [(d.key, fingerprinter.fingerprint(d.text, titles(d.text) if titles else None)) for d in chunk]
            )
    return verdicts


def second_verdicts(docs: list[Doc], verdicts: list) -> dict[int, object]:
    """The verdict of each pair's second document to arrive."""
    seen: set[int] = set()
    out = {}
    for doc, verdict in zip(docs, verdicts):
        if doc.pair in seen:
            out[doc.pair] = verdict
        seen.add(doc.pair)
    return out


def missed_pairs(
    excerpts: list[tuple[str, str, float]],
    found: dict[str, dict[int, bool]],
    fingerprinter: Fingerprinter,
    titles: Titles,
) -> list[str]:
    """Each excerpt pair not recognised in an order, with the rule's answer on the pair: the
    rule's reason when it says other stories, "never compared" when it says one story (the
    lookup did not bring the stored copy to the rule in that order)."""
    lines = []
    for p, (excerpt, complete, share) in enumerate(excerpts):
        orders = [order for order, hits in found.items() if not hits[p]]
        if not orders:
            continue
        judgement = judge(
            fingerprinter.fingerprint(excerpt, titles(excerpt)), fingerprinter.fingerprint(complete, titles(complete))
        )
        why = (
            "never compared (the rule says one story)"
            if judgement.same_story
            else judgement.reason("the excerpt", "the article")
        )
        lead = lead_of(excerpt, complete)[:30].replace("\n", "/")
        lines.append(f"- pair {p} ({100 * share:.0f}%, missed {' and '.join(orders)}): {lead}…: {why}")
    return lines


def pool_figure(data: Path, seed: int, with_titles: bool = True) -> str:
    """The rule's answer on an excerpt of every long article of the pool (one share drawn each),
    not on a seed's half of it: what a seed's figure is a draw from. The rule alone, on the
    pair (no lookup, so pairs never compared count as recognised)."""
    rng = random.Random(seed)
    longs, _ = _pools(data, rng)
    fingerprinter = Fingerprinter()
    titles = Titles(seed + 5, with_titles)
    pairs = [pair for pair in excerpt_pairs(longs, rng, len(longs), titles=titles) if not several_briefs(pair[1])]
    missed = [
        c
        for e, c, _ in pairs
        if not judge(fingerprinter.fingerprint(e, titles(e)), fingerprinter.fingerprint(c, titles(c))).same_story
    ]
    leads = "; ".join(c[:16].replace("\n", "/") for c in sorted(missed))
    return f"| {seed} | {len(longs)} | {_share(len(pairs) - len(missed), len(pairs))} | {leads} |"


def _share(hit: int, total: int) -> str:
    return f"{hit}/{total} = {100.0 * hit / max(1, total):.2f}%"


def run(
    data: Path,
    seed: int,
    store_uri: str,
    sizes: dict[str, int],
    missed: bool = False,
    share_declared: float = DECLARED,
    with_titles: bool = True,
) -> bool:
    rng = random.Random(seed)
    longs, shorts = _pools(data, rng)
    fingerprinter = Fingerprinter()
    ok = True
    rows = []

    def floor(label: str, hit: int, total: int, bound: float, at_least: bool = True) -> None:
        nonlocal ok
        share = hit / max(1, total)
        met = share >= bound if at_least else share <= bound
        ok = ok and met
        rows.append(
            f"| {label} | {_share(hit, total)} | {'>=' if at_least else '<='} {100 * bound:g}%{'' if met else ' **missed**'} |"
        )

    started = time.perf_counter()
    # Excerpts and complete articles, each order.
    half = len(longs) // 2
    titles = Titles(seed + 5, with_titles)
    excerpts = [
        pair
        for pair in excerpt_pairs(longs[:half], rng, sizes["excerpts"], titles=titles)
        if not several_briefs(pair[1])
    ]
    found = {}
    for order, roles in (("excerpt first", ("excerpt", "complete")), ("complete first", ("complete", "excerpt"))):
        pairs = [(e, c) if roles[0] == "excerpt" else (c, e) for e, c, _ in excerpts]
        docs = _stream(pairs, random.Random(seed), "x", roles)
        seconds = second_verdicts(docs, check(docs, store_uri, fingerprinter, titles=titles))
        found[order] = {p: v.status == DUPLICATE and v.duplicate_of == f"x/{p}-a" for p, v in seconds.items()}
        floor(
            f"excerpts: second copy recognised, {order}", sum(found[order].values()), len(found[order]), FLOOR_EXCERPT
        )
    agree = sum(found["excerpt first"][p] == found["complete first"][p] for p in found["excerpt first"])
    floor("excerpts: the two orders agree", agree, len(excerpts), FLOOR_AGREE)
    by_share = Counter()
    for p, (_, _, share) in enumerate(excerpts):
        bucket = f"{int(share * 10) * 10}-{int(share * 10) * 10 + 10}%"
        by_share[bucket, "n"] += 1
        by_share[bucket, "both"] += found["excerpt first"][p] and found["complete first"][p]
    misses = missed_pairs(excerpts, found, fingerprinter, titles) if missed else []

    # NEARDUP_PREFER = "longest": excerpts of 20-95% first, the complete article later takes
    # their place; a second copy of the same length (commas changed) never does.
    wide = excerpt_pairs(longs[:half], random.Random(seed + 2), sizes["excerpts"], LONGEST_SHARE, titles)
    # leads that left a sentence out, of articles that are one story
    wide = [(e, c, share) for e, c, share in wide if left_out_sentence(e, c) and not several_briefs(c)]
    docs = _stream([(e, c) for e, c, _ in wide], random.Random(seed + 2), "l", ("excerpt", "complete"))
    seconds = second_verdicts(docs, check(docs, store_uri, fingerprinter, prefer="longest", titles=titles))
    replaced = sum(v.status != DUPLICATE and v.replaces == f"l/{p}-a" for p, v in seconds.items())
    floor("longest: the complete article replaces its excerpt (20-95%)", replaced, len(seconds), FLOOR_LONGEST)
    same = [(c, c.replace("，", ",")) for _, c, _ in wide]
    docs = _stream(same, random.Random(seed + 3), "s", ("complete", "complete"))
    seconds = second_verdicts(docs, check(docs, store_uri, fingerprinter, prefer="longest", titles=titles))
    flipped = sum(v.replaces is not None for v in seconds.values())
    floor("longest: copies of one length that replace the stored one", flipped, len(seconds), 0.0, at_least=False)

    # Quoting texts and their stories, each order.
    # The repost heads have a generator of their own: the share changes no other draw.
    heads = (random.Random(seed + 4), share_declared)
    quotes = quote_pairs(longs[half:], shorts, rng, sizes["quotes"], reserve=longs[:half], heads=heads, titles=titles)
    where_of = [w for _, _, w in quotes]
    for order, roles in (("story first", ("story", "quoting")), ("quoting text first", ("quoting", "story"))):
        pairs = [(s, q) if roles[0] == "story" else (q, s) for s, q, _ in quotes]
        docs = _stream(pairs, random.Random(seed + 1), "q", roles)
        seconds = second_verdicts(docs, check(docs, store_uri, fingerprinter, titles=titles))
        dup = [p for p, v in seconds.items() if v.status == DUPLICATE]
        floor(f"quoting texts called duplicates, {order}", len(dup), len(seconds), CEILING_QUOTE, at_least=False)
        if dup:
            rows.append(f"| (where the quote sits in those) | {dict(Counter(where_of[p] for p in dup))} | |")

    # Digests and the stories they carry, each order.
    groups = digest_groups(shorts[len(quotes) :], rng, sizes["digests"], heads=heads, titles=titles)
    for order in ("stories first", "digest first"):
        docs = []
        for number, (digest, items) in enumerate(groups):
            when = float(number) * 10
            docs.append(Doc(f"d/{number}", digest, when + (0 if order == "digest first" else 5), number, "digest"))
            for i, item in enumerate(items):
                docs.append(
                    Doc(
                        f"d/{number}-{i}",
                        item,
                        when + 0.01 * i + (5 if order == "digest first" else 0),
                        number,
                        "story",
                    )
                )
        docs.sort(key=lambda d: d.time)
        verdicts = check(docs, store_uri, fingerprinter, titles=titles)
        judged = [v for d, v in zip(docs, verdicts) if (d.role == "story") == (order == "digest first")]
        dup = sum(v.status == DUPLICATE for v in judged)
        floor(
            f"digests: {'stories' if order == 'digest first' else 'digests'} called duplicates, {order}",
            dup,
            len(judged),
            CEILING_QUOTE,
            at_least=False,
        )

    # Template reports with other facts, and reposts.
    for name, docs in zip(
        ("repost after its report", "repost before its report"), report_streams(rng, sizes["reports"], 0.25)
    ):
        verdicts = check(docs, store_uri, fingerprinter)
        reports = [(d, v) for d, v in zip(docs, verdicts) if d.role == "report"]
        reposts = [(d, v) for d, v in zip(docs, verdicts) if d.role == "repost"]
        if name == "repost after its report":
            wrong = [(d, v) for d, v in reports if v.status == DUPLICATE]
            floor(
                "template reports called duplicates of another report",
                len(wrong),
                len(reports),
                CEILING_TEMPLATE,
                at_least=False,
            )
            if wrong:
                rows.append(f"| (by kind) | {dict(Counter(d.key.split('/')[0] for d, _ in wrong))} | |")
            matched = sum(v.status == DUPLICATE and v.duplicate_of == d.report for d, v in reposts)
            floor("reposts matched to their own report", matched, len(reposts), FLOOR_REPOST)
        else:
            second = {d.report: v for d, v in reports if d.report in {r.report for r, _ in reposts}}
            matched = sum(v.status == DUPLICATE and v.duplicate_of == f"{key}-repost" for key, v in second.items())
            floor("reports matched to their repost that came first", matched, len(second), FLOOR_REPOST)
            others = [(d, v) for d, v in reports if d.report not in second and v.status == DUPLICATE]
            floor(
                "template reports called duplicates of another report (reposts first)",
                len(others),
                len(reports) - len(second),
                CEILING_TEMPLATE,
                at_least=False,
            )

    print(
        f"## seed {seed}, {store_uri.split('://')[0]}://{'' if with_titles else ', no titles'} "
        f"({time.perf_counter() - started:.0f} s)"
    )
    print(
        f"{len(excerpts)} excerpt pairs (of a pool of {len(longs)} long articles, half drawn), {len(quotes)} quoting texts ({dict(Counter(where_of))}), "
        f"{len(groups)} digests carrying {sum(len(i) for _, i in groups)} stories "
        f"({sum('原标题' in alone for alone, _, _ in quotes)} quoted stories and "
        f"{sum('原标题' in item for _, items in groups for item in items)} digest items alone under a repost head), "
        f"{sizes['reports']} reports of each of {len(templates.KINDS)} kinds"
    )
    print("| figure | measured | floor |\n|---|---|---|")
    print("\n".join(rows))
    shares = sorted({bucket for bucket, _ in by_share})
    print(
        "\nexcerpts recognised in both orders, by share of the article: "
        + ", ".join(f"{b} {_share(by_share[b, 'both'], by_share[b, 'n'])}" for b in shares)
    )
    if misses:
        print("\nexcerpt pairs missed, and the rule's answer on each pair:\n" + "\n".join(misses))
    print()
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data directory")
    parser.add_argument("--seed", type=int, nargs="+", default=[1998])
    parser.add_argument("--store", default="memory://")
    parser.add_argument("--excerpts", type=int, default=300)
    parser.add_argument("--quotes", type=int, default=300)
    parser.add_argument("--digests", type=int, default=60)
    parser.add_argument("--reports", type=int, default=120, help="reports of each kind")
    parser.add_argument(
        "--declared",
        type=float,
        default=DECLARED,
        help="share of quoted stories and digest items standing alone as a repost under a 原标题 head",
    )
    parser.add_argument("--no-titles", action="store_true", help="give no text its headline")
    parser.add_argument("--missed", action="store_true", help="list each excerpt pair missed, and the rule's answer")
    parser.add_argument("--pool", action="store_true", help="only the rule on an excerpt of every article of the pool")
    args = parser.parse_args(argv)
    if args.pool:
        print(
            "| seed (shares drawn) | long articles | excerpts the rule calls one story | articles missed |\n|---|---|---|---|"
        )
        print("\n".join(pool_figure(args.data, seed, not args.no_titles) for seed in args.seed))
        return 0
    sizes = {"excerpts": args.excerpts, "quotes": args.quotes, "digests": args.digests, "reports": args.reports}
    ok = all(
        [  # noqa: C419 (every seed runs)
            run(args.data, seed, args.store, sizes, args.missed, args.declared, not args.no_titles)
            for seed in args.seed
        ]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
