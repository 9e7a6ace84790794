"""Texts that share much: which are one story (a lead excerpt and its article, a reprint) and
which are not (a text quoting a story, a roundup, a template report with other facts), each
fed in both orders on the three stores, and the rule's own answer (engine.samestory)."""

import random

import pytest
from support.samestory_texts import (
    BRIDGE,
    CENSUS_ITEMS,
    CLINIC,
    DRILL,
    FORECASTS,
    MARATHON_ITEMS,
    ROUNDUP_STORIES,
    bridge,
    digest,
    dressed_bridge,
    drill_commentary,
    letter,
    repost,
    roundup,
    weather,
)

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, Fingerprinter, open_store
from scrapy_neardup.engine.prefer import policy_from
from scrapy_neardup.engine.samestory import (
    LEAD_EXCERPT,
    OTHER_FACTS,
    QUOTED_STORY,
    REPRINT,
    TOO_DIFFERENT,
    Thresholds,
    judge,
)
from scrapy_neardup.fingerprints.kernel import compiled_kernel_available
from scrapy_neardup.fingerprints.passages import passages_of

BRIDGE_LAST = BRIDGE[-1][:20]  # in the complete article, not in its excerpt
REPORTS = {
    "binhai/12": weather("滨海", 12, 8, 15, 3, 40, 62),
    "binhai/13": weather("滨海", 13, 6, 12, 4, 70, 55),
    "binhai/14": weather("滨海", 14, 5, 11, 5, 20, 71),
    "linjiang/12": weather("临江", 12, 9, 17, 2, 30, 48),
}


def _checked(store_uri, documents, prefer=None, related=False):
    """The verdicts of ``documents`` ((key, text) in arrival order) in one store, one batch."""
    fingerprinter = Fingerprinter()
    with open_store(store_uri) as store:
        detector = Detector(store, fingerprinter=fingerprinter, prefer=policy_from(prefer) if prefer else None)
        prints = [(key, fingerprinter.fingerprint(body)) for key, body in documents]
        passages = [passages_of(body) for _, body in documents] if related else None
        return detector.start_many(prints, passages)()


@pytest.mark.parametrize("paragraphs", [2, 4])
@pytest.mark.parametrize("excerpt_first", [True, False])
def test_a_lead_excerpt_and_its_article_are_one_story_in_either_order(store_uri, paragraphs, excerpt_first):
    pair = [("portal/excerpt", bridge(paragraphs)), ("daily/article", bridge())]
    first, second = pair if excerpt_first else pair[::-1]
    verdicts = _checked(store_uri, [first, second])
    assert verdicts[0].status == UNIQUE
    assert verdicts[1].status == DUPLICATE and verdicts[1].duplicate_of == first[0]


@pytest.mark.parametrize("story_first", [True, False])
def test_a_letter_quoting_a_whole_story_is_not_its_duplicate_but_related(store_uri, story_first):
    pair = [("news/clinic", CLINIC), ("letters/lift", letter())]
    first, second = pair if story_first else pair[::-1]
    verdicts = _checked(store_uri, [first, second], related=True)
    assert [v.status for v in verdicts] == [UNIQUE, UNIQUE]
    related = verdicts[1].related
    assert [entry["key"] for entry in related] == [first[0]]
    assert any("远程会诊" in passage for passage in related[0]["shared"])


@pytest.mark.parametrize("story_first", [True, False])
def test_a_commentary_opening_with_a_story_then_a_report_under_its_own_dateline_is_not_its_duplicate(
    store_uri, story_first
):
    """The report of its own comes back to the story's words as an article's later paragraphs
    would; the paper's dateline without a day ("本报绵阳电") starts it, another story."""
    pair = [("news/drill", DRILL), ("comment/floods", drill_commentary())]
    first, second = pair if story_first else pair[::-1]
    verdicts = _checked(store_uri, [first, second])
    assert [v.status for v in verdicts] == [UNIQUE, UNIQUE]
    judgement = judge(Fingerprinter().fingerprint(DRILL), Fingerprinter().fingerprint(drill_commentary()))
    assert (judgement.rule, judgement.dateline) == (QUOTED_STORY, True)
    assert "a dateline in the rest starts another story" in judgement.reason()


@pytest.mark.parametrize("roundup_first", [True, False])
def test_a_roundup_carrying_stories_in_full_drops_none_of_them(store_uri, roundup_first):
    stories = [(f"news/{number}", story) for number, story in enumerate(ROUNDUP_STORIES.values())]
    documents = [("news/roundup", roundup()), *stories] if roundup_first else [*stories, ("news/roundup", roundup())]
    verdicts = _checked(store_uri, documents)
    assert [v.status for v in verdicts] == [UNIQUE] * len(documents)


@pytest.mark.parametrize("reverse", [False, True])
def test_template_reports_with_other_facts_are_not_duplicates_and_a_repost_finds_its_own(store_uri, reverse):
    documents = list(REPORTS.items())
    documents = documents[::-1] if reverse else documents
    reposted = ("weather.example/binhai-13", repost(REPORTS["binhai/13"]))
    verdicts = _checked(store_uri, [*documents, reposted])
    assert [v.status for v in verdicts[:-1]] == [UNIQUE] * len(documents)
    assert verdicts[-1].status == DUPLICATE and verdicts[-1].duplicate_of == "binhai/13"


def test_a_repost_seen_first_is_matched_by_its_own_report_only(store_uri):
    reposted = ("weather.example/binhai-13", repost(REPORTS["binhai/13"]))
    verdicts = _checked(store_uri, [reposted, *REPORTS.items()])
    by_key = {v.key: v for v in verdicts}
    assert by_key["binhai/13"].status == DUPLICATE and by_key["binhai/13"].duplicate_of == reposted[0]
    assert all(by_key[key].status == UNIQUE for key in REPORTS if key != "binhai/13")


@pytest.mark.parametrize("reverse", [False, True])
def test_forecasts_whose_figures_coincide_but_for_one_each_way_are_other_facts(store_uri, reverse):
    # 3 to 9 degrees and 80% humidity one day, 2 to 9 degrees and 85% another: as sets, their
    # figures differ by one each way, a changed fact, so the allowance for a copy's own lines is
    # not given; a repost of either is still its own.
    documents = list(FORECASTS.items())[:: -1 if reverse else 1]
    reposted = ("weather.example/tingzhou-0305", repost(FORECASTS["tingzhou/0305"]))
    verdicts = _checked(store_uri, [*documents, reposted])
    assert [v.status for v in verdicts[:2]] == [UNIQUE, UNIQUE]
    assert verdicts[2].status == DUPLICATE and verdicts[2].duplicate_of == "tingzhou/0305"


@pytest.mark.parametrize("roundup_first", [True, False])
@pytest.mark.parametrize(
    ("items", "headings"),
    [(MARATHON_ITEMS, True), (CENSUS_ITEMS, False), (CENSUS_ITEMS, True)],
    ids=["marathon", "census", "census-headed"],
)
def test_stories_side_by_side_in_a_roundup_are_none_of_them_its_lead(store_uri, items, headings, roundup_first):
    # Two items of one subject (the marathon's reports, the census's two parts) go on with each
    # other, but a dateline starts another story in the roundup: after the first item, or past
    # the roundup's headline when it sits inside.
    stories = [(f"news/{number}", story) for number, story in enumerate(items.values())]
    whole = ("news/digest", digest(items, headings))
    documents = [whole, *stories] if roundup_first else [*stories, whole]
    verdicts = _checked(store_uri, documents)
    assert [v.status for v in verdicts] == [UNIQUE] * len(documents)


def test_the_rule_names_stories_side_by_side_and_changed_figures():
    fingerprint = Fingerprinter().fingerprint
    one, other = (fingerprint(text) for text in FORECASTS.values())
    for judgement in (judge(one, other), judge(other, one)):
        assert judgement.rule == TOO_DIFFERENT and not judgement.same_story
        assert judgement.other_figures == 1 and "figures" in judgement.reason()
    for items, headings, position in ((MARATHON_ITEMS, True, "inside"), (CENSUS_ITEMS, False, "opening")):
        whole = fingerprint(digest(items, headings))
        story = fingerprint(next(iter(items.values())) if position == "opening" else list(items.values())[1])
        for judgement in (judge(story, whole), judge(whole, story)):
            assert judgement.rule == QUOTED_STORY and judgement.position == position and judgement.dateline
            assert "a dateline in the rest starts another story" in judgement.reason()


@pytest.mark.parametrize("excerpt_first", [True, False])
def test_longest_keeps_the_complete_article_whichever_came_first(store_uri, excerpt_first):
    pair = [("portal/excerpt", bridge(2)), ("daily/article", bridge())]
    first, second = pair if excerpt_first else pair[::-1]
    verdicts = _checked(store_uri, [first, second], prefer="longest")
    if excerpt_first:
        assert verdicts[1].status == UNIQUE and verdicts[1].replaces == "portal/excerpt"
    else:
        assert verdicts[1].status == DUPLICATE and verdicts[1].duplicate_of == "daily/article"


def test_longest_takes_a_copy_that_adds_a_closing_paragraph_and_never_flips_equal_copies(store_uri):
    documents = [
        ("daily/article", bridge()),
        ("other/article", bridge()),  # the same length: no replacement either way
        ("late/article", bridge(closing=True)),  # a paragraph of the same story more
        ("again/article", bridge()),
    ]
    verdicts = _checked(store_uri, documents, prefer="longest")
    assert verdicts[1].status == DUPLICATE and verdicts[1].duplicate_of == "daily/article"
    assert verdicts[2].status == UNIQUE and verdicts[2].replaces == "daily/article"
    assert verdicts[3].status == DUPLICATE and verdicts[3].duplicate_of == "late/article"


def test_the_rule_is_symmetric_and_names_its_case():
    fingerprint = Fingerprinter().fingerprint
    cases = {
        LEAD_EXCERPT: (bridge(2), bridge()),
        REPRINT: (bridge(6), bridge()),
        QUOTED_STORY: (CLINIC, letter()),
        OTHER_FACTS: (REPORTS["binhai/12"], REPORTS["binhai/13"]),
    }
    for rule, (a, b) in cases.items():
        one, other = fingerprint(a), fingerprint(b)
        forth, back = judge(one, other), judge(other, one)
        assert forth.rule == back.rule == rule
        assert forth.same_story == back.same_story == (rule in (LEAD_EXCERPT, REPRINT))
        assert forth.reason("A", "B").startswith(rule.replace("other facts", "template report with other facts"))
    roundup_print = fingerprint(roundup())
    for story in ROUNDUP_STORIES.values():
        assert judge(fingerprint(story), roundup_print).rule == QUOTED_STORY


def test_explain_says_which_rule_decided(tmp_path, capsys):
    from scrapy_neardup.cli import main

    (tmp_path / "story.txt").write_text(CLINIC, encoding="utf-8")
    (tmp_path / "letter.txt").write_text(letter(), encoding="utf-8")
    (tmp_path / "excerpt.txt").write_text(bridge(2), encoding="utf-8")
    (tmp_path / "article.txt").write_text(bridge(), encoding="utf-8")
    main(["explain", str(tmp_path / "story.txt"), str(tmp_path / "letter.txt"), "--color", "never"])
    shown = capsys.readouterr().out
    assert "not a duplicate" in shown and "rule: quoted story: B holds A" in shown
    main(["explain", str(tmp_path / "article.txt"), str(tmp_path / "excerpt.txt"), "--color", "never"])
    shown = capsys.readouterr().out
    assert "duplicate: dedup would call B a reprint of A" in shown
    assert "rule: lead excerpt: B is the opening" in shown


def test_a_store_of_a_format_without_story_words_is_refused_at_open_with_the_versions(store_uri):
    """Records of the format before the story words hold none: the rule could not judge them,
    so such a store is refused at open, never misread."""
    from scrapy_neardup.stores import StoreFormatError

    with open_store(store_uri) as store:
        previous = min(store.reads_formats) - 1  # the version before the oldest read as it is
        meta = {**store.read_meta(), "format": previous}
        if store_uri.startswith("redis"):  # its write_meta only creates a namespace
            from scrapy_neardup.stores.redis.store import encode_meta

            store.client.set(store._key("meta"), encode_meta(meta))
        else:
            store.write_meta(meta)
    with pytest.raises(StoreFormatError, match=f"format version {previous}, this scrapy-neardup reads version"):
        open_store(store_uri)


def test_the_review_page_shows_the_text_of_the_copy_it_names(tmp_path):
    """With longest, the complete article takes the excerpt's place; a later copy's section
    names the complete article and shows its text, not the excerpt's."""
    import html
    import json
    import re

    from scrapy_neardup.cli import main

    records = [
        {"id": "portal/excerpt", "text": bridge(2)},
        {"id": "daily/article", "text": bridge()},
        {"id": "other/article", "text": "转载自清江日报\n" + bridge()},
    ]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    page = tmp_path / "review.html"
    argv = ["dedup", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"), "--no-progress"]
    assert main([*argv, "--prefer", "longest", "--report", str(page)]) == 0
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r.get("duplicate_of") for r in out] == [None, None, "daily/article"]
    sections = re.findall(
        r'<section class="pair" data-key="([^"]*)" data-duplicate-of="([^"]*)">(.*?)</section>',
        page.read_text(encoding="utf-8"),
        re.S,
    )
    assert [(key, first) for key, first, _ in sections] == [("other/article", "daily/article")]
    first_copy = re.search(r'<div class="text" data-key="daily/article">(.*?)</div>', sections[0][2], re.S)
    shown = html.unescape(re.sub(r"<[^>]+>", "", first_copy.group(1)))
    assert BRIDGE_LAST in shown and bridge(2) not in shown  # the complete article's text, not the excerpt's


def test_longest_keeps_the_source_when_a_reprint_adds_only_its_own_lines(store_uri):
    dressed = "\n".join(
        [
            "青石大桥今天通车",
            "发布时间：2024-06-22 来源：网络",
            bridge(),
            "【推广】下载本地新闻客户端，每天第一时间推送权威资讯，新用户注册即可领取话费券。",
        ]
    )
    verdicts = _checked(store_uri, [("daily/article", bridge()), ("portal/reprint", dressed)], prefer="longest")
    assert verdicts[1].status == DUPLICATE and verdicts[1].duplicate_of == "daily/article"
    assert not verdicts[1].replaces


@pytest.mark.parametrize("later", ["closing sentence", "own lines"])
def test_longest_takes_one_closing_sentence_of_the_story_not_a_reprints_own_lines(store_uri, later):
    """What a copy adds decides, not how much: one sentence of the story (42 content characters)
    makes the complete copy; a headline, a dated source line and an editor line (38) do not."""
    text = bridge(sentence=True) if later == "closing sentence" else dressed_bridge()
    verdicts = _checked(store_uri, [("daily/article", bridge()), ("late/article", text)], prefer="longest")
    if later == "closing sentence":
        assert verdicts[1].status == UNIQUE and verdicts[1].replaces == "daily/article"
    else:
        assert verdicts[1].status == DUPLICATE and verdicts[1].duplicate_of == "daily/article"
        assert not verdicts[1].replaces


def test_a_copy_extends_another_only_by_a_sentence_of_the_story():
    fingerprint = Fingerprinter().fingerprint
    article = fingerprint(bridge())
    for text, extends in [
        (bridge(sentence=True), True),
        (bridge(closing=True), True),
        (dressed_bridge(), False),
        (bridge() + "（记者 周清 韩明）", False),  # a byline is no sentence of the story
        (bridge().replace("，", ","), False),  # the same length
    ]:
        copy = fingerprint(text)
        forth, back = judge(copy, article), judge(article, copy)
        assert forth.same_story and forth.extends == back.extends == extends, text[-30:]
        assert not extends or forth.larger == 0


def test_membership_by_binary_search_is_numpys_isin():
    """The rule's membership test (sorted hashes, searched) answers as np.isin does."""
    import numpy as np

    from scrapy_neardup.engine.samestory import _isin

    rng = np.random.default_rng(7)
    for size, among in [(0, 5), (5, 0), (40, 40), (128, 128), (24, 3)]:
        ordered = np.unique(rng.integers(0, 200, among, dtype=np.uint32))
        values = np.concatenate([rng.integers(0, 260, size, dtype=np.uint32), ordered[: size // 2]])
        assert (_isin(values, ordered) == np.isin(values, ordered)).all()
        assert _isin(values, ordered).dtype == bool


def test_figures_and_agreement_on_python_ints_are_those_of_numpy():
    """The rule's counts of missing figures and its agreement of story words, taken on Python
    ints, are those of the same sums and tests on numpy arrays (NaN for weightless words)."""
    import math
    from types import SimpleNamespace

    import numpy as np

    from scrapy_neardup.engine.samestory import _agreement, _figures
    from scrapy_neardup.fingerprints.storywords import FIGURES, StoryWords

    def words(rng, count, figures, idf_top=256):
        drawn = np.unique(rng.integers(0, 60, count, dtype=np.uint32))
        return StoryWords(
            rng.permutation(drawn).astype(np.uint32),
            rng.integers(0, idf_top, len(drawn), dtype=np.uint8),
            np.zeros(len(drawn), dtype=np.uint16),
            np.unique(rng.integers(0, 40, figures, dtype=np.uint32))[:FIGURES],
        )

    def numpy_figures(small, large):
        mine, theirs = small.figures, large.figures
        limit = min(
            int(mine[-1]) if len(mine) >= FIGURES else 1 << 32, int(theirs[-1]) if len(theirs) >= FIGURES else 1 << 32
        )
        compared = mine[mine <= limit]
        return int(np.count_nonzero(~np.isin(compared, theirs))), len(compared)

    def numpy_agreement(small, large):
        if len(small.words) < 5:
            return None
        weights = small.idf.astype(np.float64) / 16.0
        with np.errstate(invalid="ignore"):
            return float(weights[np.isin(small.words, large.words)].sum() / weights.sum())

    rng = np.random.default_rng(5)
    for round in range(400):
        a = words(rng, rng.integers(0, 30), rng.integers(0, 40), 1 if round % 50 == 0 else 256)
        b = words(rng, rng.integers(0, 30), rng.integers(0, 40))
        text_a, text_b = SimpleNamespace(story_words=a), SimpleNamespace(story_words=b)
        assert _figures(text_a, text_b) == numpy_figures(a, b)
        found, expected = _agreement(a, b), numpy_agreement(a, b)
        assert found == expected or (math.isnan(found) and math.isnan(expected))
    assert _figures(SimpleNamespace(story_words=None), text_b) == (0, 0) and _agreement(None, b) is None


@pytest.mark.skipif(not compiled_kernel_available(), reason="story words are made at once without the C kernel")
def test_story_words_are_compared_only_where_they_decide():
    """A copy whose containment falls short of the floor is one story when its story words and
    figures are the other's (a reprint edited in many places), and another when they are not;
    a copy that holds the other whole is one story by its containment and figures alone, and
    its story words are never made (the figures are counted alone). Either way the judgement
    is the one made with both texts' story words at hand."""
    from support.corpus import ARTICLES, reprint, text

    fingerprinter, thresholds = Fingerprinter(), Thresholds()
    rescued = refused = unread = 0
    for name in ARTICLES:
        copies = [reprint(name)] + [_edited(text(name), every) for every in (8, 10, 12, 15)]
        for copy in copies:
            original, lazy, eager = (fingerprinter.fingerprint(body) for body in (text(name), copy, copy))
            eager.story_words.words, original.story_words.words  # noqa: B018 - made before judging
            judged = judge(lazy, original, thresholds)
            assert judged == judge(eager, original, thresholds), (name, copy[:30])
            small = min(lazy.chars, original.chars)
            below_floor = thresholds.forgiving(judged.containment, small) < thresholds.containment_floor(small)
            rescued += judged.same_story and below_floor
            refused += not judged.same_story and below_floor and lazy.story_words._found is not None
            if judged.rule == REPRINT and lazy.story_words._found is None:
                unread += 1
                assert lazy.story_words.figures.tolist() == eager.story_words.figures.tolist()
    assert rescued and refused and unread


def _edited(body: str, every: int) -> str:
    """``body`` with every ``every``-th character, where Chinese, written as another."""
    other = random.Random(every)
    return "".join(
        other.choice("甲乙丙丁戊己庚辛") if at % every == 0 and "\u4e00" <= char <= "\u9fff" else char
        for at, char in enumerate(body)
    )
