"""A lead excerpt named by its article's headline: a smaller text held whole at the start of a
larger one, one of them declaring the other's headline as its original title (原标题), is one
story even where the rest of the article turns to other things; a commentary quoting a reposted
story whole has a headline of its own, and stays another story. Fed in both orders on the
stores, and records written without titles still read and judge as before."""

import pytest
from support.samestory_texts import CLINIC, ESSAY, ESSAY_TITLE, LETTER_AFTER, LETTER_OWN, essay

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, Fingerprinter, open_store
from scrapy_neardup.engine.samestory import LEAD_EXCERPT, QUOTED_STORY, judge
from scrapy_neardup.fingerprints.titles import declared_title, title_hash
from scrapy_neardup.review.explain import explain
from scrapy_neardup.stores.record import DocRecord

PORTAL_TITLE = "云岭村茶农的好日子"  # the portal's own headline for its excerpt
CLINIC_TITLE = "柳河村卫生室开通远程会诊"
REPOSTED_CLINIC = f"来源：柳河日报  原标题：{CLINIC_TITLE}\n{CLINIC}"
COMMENTARY_TITLE = "加装电梯，邻里多一分体谅"


def commentary() -> str:
    """A reader's letter opening with the clinic story whole, then going on with its own."""
    return "\n".join([CLINIC, *LETTER_AFTER, *LETTER_OWN])


def _checked(store_uri, documents):
    """The verdicts of ``documents`` ((key, text, headline) in arrival order), one batch."""
    fingerprinter = Fingerprinter()
    with open_store(store_uri) as store:
        detector = Detector(store, fingerprinter=fingerprinter)
        prints = [(key, fingerprinter.fingerprint(text, title)) for key, text, title in documents]
        return detector.start_many(prints)()


@pytest.mark.parametrize("excerpt_first", [True, False])
@pytest.mark.parametrize("paragraphs", [2, 3])
def test_an_excerpt_declaring_its_articles_headline_is_one_story_in_either_order(store_uri, excerpt_first, paragraphs):
    pair = [("portal/excerpt", essay(paragraphs), PORTAL_TITLE), ("daily/essay", essay(), ESSAY_TITLE)]
    first, second = pair if excerpt_first else pair[::-1]
    verdicts = _checked(store_uri, [first, second])
    assert verdicts[0].status == UNIQUE
    assert verdicts[1].status == DUPLICATE and verdicts[1].duplicate_of == first[0]


@pytest.mark.parametrize("excerpt_first", [True, False])
@pytest.mark.parametrize("declared", [None, "云岭茶叶卖出好价钱"])
def test_without_headlines_or_naming_another_headline_the_essays_excerpt_is_not_taken(
    store_uri, excerpt_first, declared
):
    """The essay's later paragraphs turn from its opening scene: the continuity test alone
    turns the excerpt down (no headline given to the essay), and so it does when the excerpt's
    原标题 names another headline than the essay's."""
    excerpt = essay(2, title=declared) if declared else essay(2)
    pair = [("portal/excerpt", excerpt, PORTAL_TITLE), ("daily/essay", essay(), ESSAY_TITLE if declared else None)]
    first, second = pair if excerpt_first else pair[::-1]
    assert [v.status for v in _checked(store_uri, [first, second])] == [UNIQUE, UNIQUE]


@pytest.mark.parametrize("story_first", [True, False])
def test_a_commentary_opening_with_a_reposted_story_is_not_its_duplicate(store_uri, story_first):
    """The story declares its own title; the commentary's headline is its own."""
    pair = [("portal/clinic", REPOSTED_CLINIC, CLINIC_TITLE), ("letters/lift", commentary(), COMMENTARY_TITLE)]
    first, second = pair if story_first else pair[::-1]
    assert [v.status for v in _checked(store_uri, [first, second])] == [UNIQUE, UNIQUE]


def test_the_larger_text_declaring_the_smallers_headline_names_it_too():
    """A portal reposting the complete essay under 原标题 names the excerpt's headline."""
    fingerprint = Fingerprinter().fingerprint
    excerpt = fingerprint("\n".join(ESSAY[:2]), ESSAY_TITLE)
    article = fingerprint(f"原标题：{ESSAY_TITLE}\n来源：南山晨报\n{essay()}", "云岭茶园的一天")
    for one, other in ((excerpt, article), (article, excerpt)):
        found = judge(one, other)
        assert (found.rule, found.same_story, found.named) == (LEAD_EXCERPT, True, True)
    assert judge(fingerprint("\n".join(ESSAY[:2])), article).rule == QUOTED_STORY


def test_titles_compare_normalised_and_the_declared_one_is_read_from_the_credit_line():
    assert title_hash("國企改革：「控制」 問題") == title_hash("国企改革“控制”问题") != 0
    assert title_hash("") == title_hash("  ，。 ") == title_hash(None) == 0
    assert declared_title(f"来源：南山晨报  原标题：{ESSAY_TITLE}\n正文。") == ESSAY_TITLE
    assert declared_title(f"原标题：{ESSAY_TITLE} 编辑：王某\n来源：南山晨报\n正文。") == ESSAY_TITLE
    assert declared_title("正文里谈到原标题：这一行不是来源行。") is None
    assert declared_title("\n".join(ESSAY)) is None


def test_a_record_keeps_its_titles_and_one_written_without_them_reads_as_before(store_uri):
    fingerprinter = Fingerprinter()
    titled = fingerprinter.fingerprint(essay(2), PORTAL_TITLE)
    plain = fingerprinter.fingerprint("\n".join(ESSAY[:2]))
    assert (plain.title, plain.declared) == (0, 0) and titled.declared == title_hash(ESSAY_TITLE)
    record = DocRecord(1, "k", 0.0, titled.simhash, titled.sketch, titled.chars, story_words=titled.story_words)
    without = record.to_bytes()
    read = DocRecord.from_bytes(without)
    assert (read.title, read.declared, read.chars) == (0, 0, titled.chars)
    record.title, record.declared = titled.title, titled.declared
    data = record.to_bytes()
    assert len(data) == len(without) + 16
    read = DocRecord.from_bytes(data)
    assert (read.title, read.declared) == (titled.title, titled.declared)
    assert read.story_words is not None and read.sketch.places is not None
    # A store holding the article written without titles (as before): the excerpt arriving
    # with its credit line is judged by the continuity test alone, as before.
    with open_store(store_uri) as store:
        detector = Detector(store, fingerprinter=fingerprinter)
        stored = detector.check_fingerprint("daily/essay", fingerprinter.fingerprint(essay()))
        later = detector.check_fingerprint("portal/excerpt", titled)
        assert (stored.status, later.status) == (UNIQUE, UNIQUE)


def test_explain_says_the_declared_title_decided(tmp_path, capsys):
    from scrapy_neardup.cli import main

    found = explain(essay(), essay(2), titles=(ESSAY_TITLE, PORTAL_TITLE))
    assert found.judgement.rule == LEAD_EXCERPT and "原标题" in found.judgement.reason("A", "B")
    (tmp_path / "article.txt").write_text(essay(), encoding="utf-8")
    (tmp_path / "excerpt.txt").write_text(essay(2), encoding="utf-8")
    files = [str(tmp_path / "article.txt"), str(tmp_path / "excerpt.txt"), "--color", "never"]
    main(["explain", *files, "--title-a", ESSAY_TITLE, "--title-b", PORTAL_TITLE])
    shown = capsys.readouterr().out
    assert "duplicate: dedup would call B a reprint of A" in shown
    assert "rule: lead excerpt: B is the opening" in shown and "(原标题) is the other's headline" in shown
    main(["explain", *files])
    assert "rule: quoted story" in capsys.readouterr().out


@pytest.mark.parametrize("title_field", ["title", "headline"])
def test_dedup_judges_each_record_with_its_title_field(tmp_path, title_field):
    """``neardup dedup`` reads the headline from --title-field: the excerpt is a duplicate of
    the essay with headlines, a record of its own without (a field that is not there)."""
    import json

    from scrapy_neardup.cli import main

    records = [
        {"url": "https://daily.example/essay", "text": essay(), title_field: ESSAY_TITLE},
        {"url": "https://portal.example/excerpt", "text": essay(2), title_field: PORTAL_TITLE},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    outputs = {}
    for given in (title_field, "none"):
        target = tmp_path / f"out-{given}.jsonl"
        store = f"leveldb://{tmp_path}/store-{given}"
        assert main(["dedup", str(source), "-o", str(target), "--store", store, "--title-field", given]) == 0
        outputs[given] = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    excerpt = outputs[title_field][1]
    assert excerpt["duplicate_of"] == records[0]["url"]
    assert excerpt["similar_id"] == outputs[title_field][0]["similar_id"]
    assert outputs["none"][1]["duplicate_of"] is None


def test_only_the_characters_the_quick_test_looks_for_fold_to_those_of_the_label():
    """declared_title folds and searches a text's head only when it holds 原 and 题 or 題:
    no other character folds to either (by the table, or by NFKC for those it leaves to it)."""
    import unicodedata

    import numpy as np

    from scrapy_neardup.fingerprints.text import text_tables

    fold = text_tables().fold
    slow = [chr(code) for code in np.flatnonzero(fold == 0xFFFFFFFE).tolist()]
    wide = [chr(code) for code in range(0x10000, 0x110000)]
    for label, looked_for in (("原", {"原"}), ("题", {"题", "題"})):
        assert {chr(code) for code in np.flatnonzero(fold == ord(label)).tolist()} == looked_for
        assert not [char for char in slow + wide if label in unicodedata.normalize("NFKC", char).lower()]
