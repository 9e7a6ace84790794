"""A labelled reprint benchmark made from real Chinese news (People's Daily, January 1998).

The corpus has no reprints, so they are made here the way Chinese sites make them: a source
line or banner on top, an editor line below, a few changed characters, half-width punctuation
and digits, paragraphs split, merged or cut from the end, a promotion paragraph, white space
and zero-width characters, the reprinting site's own disclaimer. Hard negatives are distinct
stories that look alike to a fingerprint: articles ending with the same long site disclaimer,
articles quoting one or two long sentences of another, and pairs of real same-topic items
(weather forecasts, receptions) found in the corpus by their shingle overlap.

Everything is drawn from one seeded ``random.Random``, so a seed gives the same stream.
The ground truth: a document is a duplicate iff an earlier document of its story exists.

    python benchmarks/reprints.py --seed 1998 -o reprints.jsonl   # the stream as JSON lines
    python benchmarks/reprints.py --stats                          # only its make-up
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import re
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scrapy_neardup.newsworld import transforms

REPO = Path(__file__).resolve().parent.parent

DEFAULT_DATA = REPO.parent / "shared" / "data"
CORPUS = Path("zh-pd199801") / "pd199801_dev.jsonl.gz"
DEFAULT_SEED = 1998

SHORT_RANGE = (150, 600)  # single articles kept as short stories (the hard case for SimHash)
LONG_RANGE = (1000, 2000)  # news-length stories made of consecutive articles
SHORT_SHARE = 0.35  # share of stories that are single short articles
QUOTE_SHARE = 0.12  # share of stories that quote one or two long sentences of an earlier one
TOPIC_PAIRS = 30  # same-topic pairs of real articles, at most
REPRINTED_SHARE = 0.85  # stories that get reprints at all
REPRINTS = (1, 4)  # reprints per reprinted story
MEAN_DELAY = 25.0  # stories published between an original and a reprint, on average

# Invented sites. Five end every article with a long disclaimer of their own (80-200 chars).
SITES: list[tuple[str, str, str | None]] = [
    (
        "dfkx",
        "东方快讯网",
        "免责声明：本网转载的稿件均来自互联网或其他媒体，转载目的在于传递更多信息，并不代表本网"
        "赞同其观点或对其真实性负责。如稿件涉及作品内容、版权或其他问题，请在三十日内与本网联系，"
        "我们将在核实后第一时间删除。本网对此声明保留最终解释权。",
    ),
    (
        "jczx",
        "江城在线",
        "版权声明：凡注明“来源：江城在线”的稿件，版权均属江城在线所有，未经书面授权不得转载、"
        "摘编或以其他方式使用；已获授权的单位，应在授权范围内使用并注明“来源：江城在线”，"
        "违者本网将依法追究其法律责任。",
    ),
    (
        "bcxw",
        "北辰新闻网",
        "特别提示：本文仅代表作者本人观点，与北辰新闻网立场无关，其原创性以及文中陈述的文字和内容"
        "未经本站证实，本站对本文以及其中全部或部分内容、文字的真实性、完整性和及时性不作任何保证"
        "或承诺，请读者仅作参考并自行核实相关内容，据此操作风险自担。",
    ),
    (
        "hxzs",
        "海峡之声网",
        "本网站所刊载的所有新闻信息及图片音视频资料均由海峡之声网及其合作单位提供并享有版权，"
        "任何机构和个人在使用前须经本网书面许可并在显著位置注明出处和作者姓名，对于擅自转载、"
        "链接、镜像或者以其他方式复制使用本网内容的行为，本网保留通过法律途径追究其责任的权利",
    ),
    (
        "chwb",
        "长河晚报",
        "长河晚报提醒：本报所有文字、图片均受著作权法保护，欢迎个人转发分享，媒体转载请联系本报新媒体中心取得授权。",
    ),
    ("nsrb", "南山日报", None),
    ("ylzx", "云岭资讯", None),
    ("xcw", "星城网", None),
    ("hbtt", "海滨头条", None),
    ("zykd", "中原快讯", None),
]
DISCLAIMER_SITES = [s for s in SITES if s[2]]
PLAIN_SITES = [s for s in SITES if not s[2]]
DISCLAIMER_SITE_SHARE = 0.35  # originals published by a site with a disclaimer

EDITORS = ["王某", "李明", "张华", "刘洋", "陈静", "赵磊", "孙悦", "周婷", "吴刚", "郑爽"]
CITIES = ["北京", "南京", "成都", "武汉", "杭州", "西安", "长沙", "厦门"]
PROMOS = [
    "关注我们的公众号“{site}”，获取更多一手新闻资讯。",
    "下载{site}客户端，随时随地看新闻，参与互动赢好礼。",
    "【{site}提示】点击右上角分享给好友，或扫描下方二维码关注我们，每天推送精选要闻。",
    "想第一时间了解本地新鲜事？搜索并关注“{site}”微信公众号，新闻线索欢迎拨打热线爆料。",
]
QUOTE_FRAMES = ["正如有关报道所说：“{q}”", "有媒体此前报道，{q}", "{q}", "据报道，“{q}”"]

# Reprint transformations and how often each is drawn. ``cut75``, ``cut90`` and ``excerpt``
# exclude each other; ``period`` (。 written as an ASCII full stop, as some sites do) is rarer.
TRANSFORMS = {
    "excerpt": 0.15,
    "banner": 0.45,
    "editor": 0.40,
    "edits": 0.35,
    "width": 0.35,
    "period": 0.08,
    "split": 0.30,
    "merge": 0.30,
    "cut90": 0.15,
    "cut75": 0.15,
    "promo": 0.25,
    "spaces": 0.30,
}
VERBATIM_SHARE = 0.10  # reprints with no change but the reprinting site's disclaimer
EXCERPT_SHARE = (0.6, 0.75)  # share of the paragraphs an excerpt keeps
EXCERPT_MIN_PARAGRAPHS = 3  # fewer cannot be cut to that share

# Script conversions (OpenCC configurations). Hong Kong and Taiwan sites publish and reprint
# in Traditional script (s2hk, s2twp with Taiwan's vocabulary, plain s2t), mainland sites
# reprint their stories in Simplified (t2s of the Traditional copy). Drawn from a generator of
# their own, so that every document they leave alone is the same as in a stream without them.
TRADITIONAL = ("s2t", "s2twp", "s2hk")
SCRIPT_TRANSFORMS = (*TRADITIONAL, "t2s")
TRADITIONAL_ORIGINAL_SHARE = 0.10  # stories first published in Traditional script
TRADITIONAL_REPRINT_SHARE = 0.12  # reprints of a Simplified original made in Traditional
SIMPLIFIED_REPRINT_SHARE = 0.5  # reprints of a Traditional original made in Simplified

# Full-width digits, Latin letters and punctuation, turned half-width by the "width" transform.
_FULL_TO_HALF = transforms.to_half_width(transforms.DIGITS + transforms.LETTERS + transforms.MARKS + '"%.')


@dataclass
class Doc:
    """One document of the stream, with its ground truth."""

    key: str
    story: int
    text: str
    kind: str  # original | reprint | quote | topic (a quote or topic document is an original too)
    site: str
    length: str  # short | long: the class of the story's original
    transforms: tuple[str, ...] = ()  # reprints only
    quoted_story: int | None = None  # quote: the story whose sentences it quotes
    partner_story: int | None = None  # topic: the other story of the pair
    time: float = 0.0
    script: str = ""  # originals published in Traditional: the conversion that made them
    title: str = ""  # its headline, as an item's title field gives it: the story's own (a reprint keeps it)

    @property
    def disclaimer(self) -> bool:
        return SITE_BY_SLUG[self.site][2] is not None


SITE_BY_SLUG = {s[0]: s for s in SITES}


@dataclass
class _Story:
    story: int
    body: str
    length: str
    kind: str = "original"
    title: str = ""
    quoted_story: int | None = None
    partner_story: int | None = None
    paragraphs: list[str] = field(default_factory=list)
    # A quote's heading joined onto its sentence, (heading and the sentence's first character,
    # that character): the stream is drawn with the body as it was, then each text of the story
    # loses the heading, so that the draws (which depend on the body) stay those they were.
    joined: list[tuple[str, str]] = field(default_factory=list)


def _unjoined(text: str, story: _Story) -> str:
    """A text of ``story`` without the headings its quotes were joined onto (see ``_Story.joined``),
    found as a copy's transformations leave them (digits and punctuation of either width, spaces
    put in). A copy whose edits changed a character of the heading keeps it."""
    for joined, start in story.joined:
        text = _loose(joined).sub(start, text, count=1)
    return text


def _loose(text: str) -> re.Pattern[str]:
    """A pattern matching ``text`` in either width, with spaces between its characters."""
    forms = ("[" + re.escape(c + unicodedata.normalize("NFKC", c)) + "]" for c in text)
    return re.compile("[ \u3000]*".join(forms))


def load_articles(data: Path) -> list[dict]:
    """The corpus articles, in corpus order."""
    path = Path(data) / CORPUS
    if not path.exists():
        raise SystemExit(f"corpus not found: {path} (give the shared data directory with --data)")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _content(text: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text))


def _shingles(text: str, width: int = 5) -> set[str]:
    chars = _content(text)
    return {chars[i : i + width] for i in range(len(chars) - width + 1)}


def _overlaps(articles: list[dict]) -> tuple[set[int], list[tuple[int, int]]]:
    """Articles too close to an earlier one (left out) and same-topic pairs (kept as negatives).

    A later article containing half of an earlier one (a decree and its explanation, one
    news item from two agencies) would make the ground truth ambiguous, so it is left out.
    Pairs that share 15-50% of the smaller one's shingles are the same topic, not a reprint.
    """
    shingles = [_shingles(a["text"]) for a in articles]
    index: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(shingles):
        for g in s:
            index[g].append(i)
    shared: Counter = Counter()
    for members in index.values():
        if len(members) > 30:  # a stock phrase, not topic evidence
            continue
        for a in range(len(members)):
            for b in range(a + 1, len(members)):
                shared[members[a], members[b]] += 1
    excluded: set[int] = set()
    pairs = []
    for (a, b), n in sorted(shared.items()):
        smaller = min(len(shingles[a]), len(shingles[b]))
        if smaller == 0:
            continue
        containment = n / smaller
        if containment >= 0.5:
            excluded.add(b)
        elif containment >= 0.15:
            pairs.append((containment, a, b))
    topic: list[tuple[int, int]] = []
    used: set[int] = set()
    for _, a, b in sorted(pairs, reverse=True):
        if a in used or b in used or a in excluded or b in excluded:
            continue
        if all(SHORT_RANGE[0] <= len(articles[i]["text"]) <= 1200 for i in (a, b)):
            topic.append((a, b))
            used.update((a, b))
        if len(topic) == TOPIC_PAIRS:
            break
    return excluded, topic


def _cut_sentences(paragraph: str, limit: int) -> str:
    """The longest run of whole sentences from the start of ``paragraph`` within ``limit``."""
    out = ""
    for sentence in transforms.sentences(paragraph):
        if len(out) + len(sentence) > limit:
            break
        out += sentence
    return out or paragraph[:limit]


def _make_stories(articles: list[dict], rng: random.Random) -> list[_Story]:
    excluded, topic_pairs = _overlaps(articles)
    partner = dict(topic_pairs)
    reserved = {b for _, b in topic_pairs}
    stories: list[_Story] = []
    long_paragraphs: list[str] = []
    long_title = ""
    target = rng.randint(*LONG_RANGE)

    def add(body: str, length: str, title: str, **extra: object) -> _Story:
        story = _Story(len(stories), body, length, title=title, **extra)  # type: ignore[arg-type]
        stories.append(story)
        return story

    for i, article in enumerate(articles):
        text = article["text"].strip()
        if i in excluded or i in reserved or not text:
            continue
        if i in partner:
            j = partner[i]
            first = add(text, "short" if len(text) <= SHORT_RANGE[1] else "long", article["title"], kind="topic")
            other = articles[j]["text"].strip()
            second = add(
                other,
                "short" if len(other) <= SHORT_RANGE[1] else "long",
                articles[j]["title"],
                kind="topic",
                partner_story=first.story,
            )
            first.partner_story = second.story
            continue
        if SHORT_RANGE[0] <= len(text) <= SHORT_RANGE[1] and rng.random() < SHORT_SHARE:
            add(text, "short", article["title"])
            continue
        for paragraph in text.split("\n"):
            paragraph = paragraph.strip()
            if not paragraph:
                continue
            if len(paragraph) > LONG_RANGE[1]:
                paragraph = _cut_sentences(paragraph, LONG_RANGE[1])
            if not long_paragraphs:
                long_title = article["title"]
            have = sum(len(p) + 1 for p in long_paragraphs)
            if have + len(paragraph) > LONG_RANGE[1]:
                if have < LONG_RANGE[0]:  # fill up with whole sentences; the rest is dropped
                    long_paragraphs.append(_cut_sentences(paragraph, LONG_RANGE[1] - have))
                    paragraph = ""
                add("\n".join(long_paragraphs), "long", long_title)
                long_paragraphs = [paragraph] if paragraph else []
                long_title = article["title"]
                target = rng.randint(*LONG_RANGE)
                continue
            long_paragraphs.append(paragraph)
            if have + len(paragraph) >= target:
                add("\n".join(long_paragraphs), "long", long_title)
                long_paragraphs = []
                target = rng.randint(*LONG_RANGE)
    return stories


def _add_quotes(stories: list[_Story], rng: random.Random) -> None:
    """Insert one or two long sentences of an earlier story into some later stories."""
    for story in stories:
        if story.story < 10 or story.kind != "original" or rng.random() >= QUOTE_SHARE:
            continue
        for _ in range(20):
            source = stories[rng.randrange(0, story.story - 5)]
            if source.kind == "quote":
                continue
            ranked = sorted(
                (s.strip() for s in transforms.sentences(source.body.replace("\n", ""))), key=len, reverse=True
            )
            count = rng.choice((1, 2))
            quoted = ranked[:count]
            quoted_chars = sum(len(q) for q in quoted)
            # a quote is a small part of its source; quoting most of a short item is a reprint
            if quoted and len(quoted[-1]) >= 30 and quoted_chars <= 0.4 * len(source.body):
                break
        else:
            continue
        paragraphs = story.body.split("\n")
        for q in quoted:
            sentence = _within_paragraph(source.body, q)
            if sentence != q:  # taken out of its texts once every draw is made (:func:`_unjoined`)
                story.joined.append((q[: q.index(sentence) + 1], sentence[:1]))
            frame = rng.choice(QUOTE_FRAMES)
            at = rng.randrange(0, len(paragraphs) + 1)
            paragraphs.insert(at, frame.format(q=q.rstrip("。！？；")) + ("" if frame.endswith("”") else "。"))
        story.body = "\n".join(paragraphs)
        story.kind = "quote"
        story.quoted_story = source.story


def _within_paragraph(body: str, sentence: str) -> str:
    """The sentence as its paragraph has it. Sentences are cut from the body with its paragraphs
    joined, and a heading line, ending in no end mark, comes out joined onto the next
    paragraph's first sentence: nobody quotes that. Such a sentence gives the longest sentence
    of one paragraph that it holds, the sentence after the heading."""
    pieces = [s.strip() for paragraph in body.split("\n") for s in transforms.sentences(paragraph)]
    if any(sentence in paragraph for paragraph in body.split("\n")):
        return sentence
    return max((piece for piece in pieces if piece and piece in sentence), key=len, default=sentence)


# ---- reprint transformations: each takes and returns a list of paragraphs ----


def _banner(paragraphs: list[str], rng: random.Random, site: str, title: str) -> list[str]:
    """A source line on top, or an inline dateline at the start of the first paragraph."""
    city = rng.choice(CITIES)
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    lines = [f"来源：{site}", f"本文转载自{site}", f"原标题：{title}" if title else f"来源：{site}"]
    inline = [f"【{city}日报讯】", f"{site}{month}月{day}日消息，", f"（{site}）"]
    if rng.random() < 0.5:
        return transforms.insert_line(paragraphs, 0, rng.choice(lines))
    return transforms.prefix_first(paragraphs, rng.choice(inline))


def _editor(paragraphs: list[str], rng: random.Random) -> list[str]:
    a, b = rng.sample(EDITORS, 2)
    line = rng.choice([f"（责任编辑：{a}）", f"责任编辑：{a}", f"编辑：{a}  审校：{b}", f"[责任编辑:{a}]"])
    return paragraphs + [line]


def _excerpt(paragraphs: list[str], rng: random.Random, source: str, title: str) -> list[str]:
    """60-75% of the paragraphs, in their order, under a source line naming the original."""
    low, high = math.ceil(EXCERPT_SHARE[0] * len(paragraphs)), math.floor(EXCERPT_SHARE[1] * len(paragraphs))
    kept = sorted(rng.sample(range(len(paragraphs)), rng.randint(low, max(low, high))))
    line = f"来源：{source}  原标题：{title}" if title else f"来源：{source}"
    return [line] + [paragraphs[i] for i in kept]


def _reprint(story: _Story, home: tuple, site: tuple, rng: random.Random, pool: str) -> tuple[str, tuple[str, ...]]:
    paragraphs = story.body.split("\n")
    if rng.random() < VERBATIM_SHARE:
        chosen: list[str] = []
    else:
        chosen = [name for name, p in TRANSFORMS.items() if rng.random() < p]
        possible = [t for t in TRANSFORMS if t != "excerpt" or len(paragraphs) >= EXCERPT_MIN_PARAGRAPHS]
        chosen = [t for t in chosen if t in possible]
        cuts = [t for t in ("excerpt", "cut90", "cut75") if t in chosen]
        if len(cuts) > 1:
            kept = rng.choice(cuts)
            chosen = [t for t in chosen if t not in cuts or t == kept]
        if not chosen:
            chosen = [rng.choice(possible)]
    name = site[1]
    # the order a reprinting site works in: cut the copy, edit it, dress it, re-typeset it
    for t in (
        "excerpt",
        "cut90",
        "cut75",
        "edits",
        "merge",
        "split",
        "promo",
        "banner",
        "editor",
        "width",
        "period",
        "spaces",
    ):
        if t not in chosen:
            continue
        if t == "excerpt":
            paragraphs = _excerpt(paragraphs, rng, home[1], story.title)
        elif t == "cut90":
            paragraphs = transforms.cut_near_end(paragraphs, 0.9)
        elif t == "cut75":
            paragraphs = transforms.cut_near_end(paragraphs, 0.75)
        elif t == "edits":
            paragraphs = transforms.random_edits(paragraphs, rng, pool)
        elif t == "merge":
            paragraphs = transforms.merge_random(paragraphs, rng)
        elif t == "split":
            paragraphs = transforms.split_random(paragraphs, rng)
        elif t == "promo":
            paragraphs = transforms.insert_random(paragraphs, rng, rng.choice(PROMOS).format(site=name))
        elif t == "banner":
            paragraphs = _banner(paragraphs, rng, name, story.title)
        elif t == "editor":
            paragraphs = _editor(paragraphs, rng)
        elif t == "width":
            paragraphs = transforms.convert_width(paragraphs, _FULL_TO_HALF, rng, rng.choice((0.6, 1.0)))
        elif t == "period":
            paragraphs = transforms.ascii_periods(paragraphs)
        elif t == "spaces":
            paragraphs = transforms.scatter_spaces(paragraphs, rng)
    applied = tuple(t for t in TRANSFORMS if t in chosen) or ("verbatim",)
    if site[2]:
        paragraphs = paragraphs + [site[2]]
        applied += ("disclaimer",)
    return "\n".join(paragraphs), applied


class _Scripts:
    """The script conversions of one stream, from their own seeded generator."""

    def __init__(self, seed: int, enabled: bool):
        self.rng = random.Random(f"scripts-{seed}")
        self.enabled = enabled
        self._converters: dict[str, object] = {}

    def convert(self, config: str, text: str) -> str:
        if config not in self._converters:
            import opencc  # the bench extra installs it; scrapy-neardup depends on it too

            self._converters[config] = opencc.OpenCC(config)
        return self._converters[config].convert(text)  # type: ignore[attr-defined]

    def original(self) -> str:
        """The conversion an original is published with ("": Simplified, as in the corpus)."""
        if self.enabled and self.rng.random() < TRADITIONAL_ORIGINAL_SHARE:
            return self.rng.choice(TRADITIONAL)
        return ""

    def reprint(self, text: str, original: str) -> tuple[str, tuple[str, ...]]:
        """A reprint's text in the script its site uses, and the conversions it went through."""
        if not self.enabled:
            return text, ()
        if original:  # made from the Traditional original: kept so, or converted back
            traditional = self.convert(original, text)
            if self.rng.random() < SIMPLIFIED_REPRINT_SHARE:
                return self.convert("t2s", traditional), ("t2s",)
            return traditional, (original,)
        if self.rng.random() < TRADITIONAL_REPRINT_SHARE:
            config = self.rng.choice(TRADITIONAL)
            return self.convert(config, text), (config,)
        return text, ()


def build_stream(data: Path | str = DEFAULT_DATA, seed: int = DEFAULT_SEED, scripts: bool = True) -> list[Doc]:
    """The benchmark: documents in arrival order, each with its story and how it was made.

    ``scripts=False`` leaves out the script conversions (the stream of earlier builds).
    """
    rng = random.Random(seed)
    conversions = _Scripts(seed, scripts)
    articles = load_articles(Path(data))
    stories = _make_stories(articles, rng)
    _add_quotes(stories, rng)
    pool = "".join(sorted({c for a in articles[:200] for c in a["text"] if "\u4e00" <= c <= "\u9fff"}))
    docs: list[Doc] = []
    for story in stories:
        when = float(story.story)
        home = rng.choice(DISCLAIMER_SITES) if rng.random() < DISCLAIMER_SITE_SHARE else rng.choice(PLAIN_SITES)
        text = _unjoined(story.body, story) + ("\n" + home[2] if home[2] else "")
        script = conversions.original()
        if script:
            text = conversions.convert(script, text)
        docs.append(
            Doc(
                key=f"{home[0]}/{story.story:04d}-0",
                story=story.story,
                text=text,
                kind=story.kind,
                site=home[0],
                length=story.length,
                quoted_story=story.quoted_story,
                partner_story=story.partner_story,
                time=when,
                script=script,
                title=story.title,
            )
        )
        if rng.random() >= REPRINTED_SHARE:
            continue
        for copy in range(1, rng.randint(*REPRINTS) + 1):
            site = rng.choice([s for s in SITES if s[0] != home[0]])
            text, applied = _reprint(story, home, site, rng, pool)
            text = _unjoined(text, story)
            text, converted = conversions.reprint(text, script)
            applied += converted
            docs.append(
                Doc(
                    key=f"{site[0]}/{story.story:04d}-{copy}",
                    story=story.story,
                    text=text,
                    kind="reprint",
                    site=site[0],
                    length=story.length,
                    transforms=applied,
                    time=when + 0.01 * copy + rng.expovariate(1.0 / MEAN_DELAY),
                    title=story.title,
                )
            )
    docs.sort(key=lambda d: d.time)
    return docs


def check_stream(
    detector: Any, docs: list[Doc], extra: Callable[[list[Doc]], dict] | None = None, batch: int = 64
) -> tuple[list, float]:
    """The stream's verdicts and the seconds they took, checked ``batch`` documents at a time
    through ``detector.start_many``; ``extra(batch)`` gives more of its keyword arguments."""
    fingerprint = detector.fingerprinter.fingerprint
    verdicts: list = []
    started = time.perf_counter()
    for at in range(0, len(docs), batch):
        chunk = docs[at : at + batch]
        documents = [(d.key, fingerprint(d.text, d.title or None)) for d in chunk]
        verdicts += detector.start_many(documents, **(extra(chunk) if extra else {}))()
    return verdicts, time.perf_counter() - started


def truth(docs: Iterable[Doc]) -> list[bool]:
    """Is each document a duplicate: has an earlier document of its story arrived?"""
    seen: set[int] = set()
    out = []
    for doc in docs:
        out.append(doc.story in seen)
        seen.add(doc.story)
    return out


def describe(docs: list[Doc]) -> str:
    """A few lines on the make-up of a stream."""
    dup = truth(docs)
    kinds = Counter(d.kind for d in docs)
    originals = [d for d, is_dup in zip(docs, dup) if not is_dup]
    lengths = sorted(len(d.text) for d in originals)
    transforms = Counter(t for d in docs for t in d.transforms)
    lines = [
        f"documents {len(docs)}, stories {len(originals)}, duplicates {sum(dup)}",
        "kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())),
        "stories by length: " + ", ".join(f"{k} {n}" for k, n in sorted(Counter(d.length for d in originals).items())),
        f"original chars: median {lengths[len(lengths) // 2]}, min {lengths[0]}, max {lengths[-1]}",
        f"originals ending with a site disclaimer: {sum(d.disclaimer for d in originals)}",
        "originals in Traditional script: "
        + (", ".join(f"{k} {n}" for k, n in Counter(d.script for d in originals if d.script).most_common()) or "none"),
        "reprint transformations: " + ", ".join(f"{k} {n}" for k, n in transforms.most_common()),
    ]
    return "\n".join(lines)


def iter_jsonl(docs: list[Doc]) -> Iterator[str]:
    for doc, is_dup in zip(docs, truth(docs)):
        record = asdict(doc)
        record["duplicate"] = is_dup
        yield json.dumps(record, ensure_ascii=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data directory (default %(default)s)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("-o", "--output", default="-", help="JSON lines file, - for stdout")
    parser.add_argument("--stats", action="store_true", help="print the make-up of the stream only")
    parser.add_argument(
        "--no-scripts",
        dest="scripts",
        action="store_false",
        help="no Traditional/Simplified conversions (the stream of earlier builds)",
    )
    args = parser.parse_args(argv)
    docs = build_stream(args.data, args.seed, args.scripts)
    if args.stats:
        print(describe(docs))
        return
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")  # noqa: SIM115
    try:
        for line in iter_jsonl(docs):
            out.write(line + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    print(describe(docs), file=sys.stderr)


if __name__ == "__main__":
    main()
