"""The study's C cut (fingerprints/segment.py) gives rjieba's tokens, token for token.

Skipped where the extension or rjieba is missing; NEARDUP_REQUIRE_KERNEL makes it refuse.
"""

import importlib.util
import os
import random

import pytest
from support.corpus import ARTICLES

from scrapy_neardup.fingerprints import segment
from scrapy_neardup.fingerprints.text import split_sentences

pytestmark = pytest.mark.skipif(
    (segment._segment is None or importlib.util.find_spec("rjieba") is None)
    and not os.environ.get("NEARDUP_REQUIRE_KERNEL"),
    reason="the study's C cut was not built, or rjieba is not installed",
)

EDGE_LINES = segment.CHECK_LINES


def rjieba_joined(line: str) -> str:
    import rjieba

    return "\x1f".join(rjieba.cut(line, hmm=True))


@pytest.mark.parametrize("line", EDGE_LINES)
def test_edge_lines_cut_as_rjieba(line):
    assert segment.cut_joined(line) == rjieba_joined(line)


def test_sentences_and_random_mixes_cut_as_rjieba():
    lines = [s for sentences in ARTICLES.values() for t in sentences for s in split_sentences(t, 0)]
    rng = random.Random(1998)
    pieces = [*"".join(lines)] + ["ま", "한", "㐀", "𠀀", "7", "12", "abc", ".", "-", "%", "ab.3"]
    lines += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(2000)]
    differing = [line for line in lines if segment.cut_joined(line) != rjieba_joined(line)]
    assert differing == []


def test_rjieba_lines_switch_to_the_c_cut_after_rjieba_cut_the_first_lines():
    import rjieba

    lines = [s for sentences in ARTICLES.values() for t in sentences for s in split_sentences(t, 0)]
    lines = (lines * (segment.SWITCH_AFTER // len(lines) + 2))[: segment.SWITCH_AFTER + 50]
    cut = segment.RjiebaLines(lambda line: rjieba.cut(line, hmm=True))
    joined = [cut(line) for line in lines[: segment.SWITCH_AFTER - 1]]
    assert not cut.by_c
    joined += [cut(line) for line in lines[segment.SWITCH_AFTER - 1 :]]
    assert cut.by_c
    assert joined == [rjieba_joined(line) for line in lines]


def test_an_rjieba_that_cuts_otherwise_keeps_its_own_cut(caplog):
    """A cut that differs from the C cut on a line (here rjieba without its HMM) is kept,
    with a warning, never the C cut's tokens."""
    import rjieba

    lines = [*segment.CHECK_LINES] * (segment.SWITCH_AFTER // len(segment.CHECK_LINES) + 2)
    cut = segment.RjiebaLines(lambda line: rjieba.cut(line, hmm=False))
    with caplog.at_level("WARNING", logger="scrapy_neardup.fingerprints.segment"):
        joined = [cut(line) for line in lines]
    assert not cut.by_c
    assert joined == ["\x1f".join(rjieba.cut(line, hmm=False)) for line in lines]
    assert "rjieba's cut is kept" in caplog.text


def test_tables_that_cannot_be_made_keep_rjiebas_cut(monkeypatch, caplog):
    """jieba's files missing (a broken install): the lines are still cut, by rjieba, with a
    warning, and no error reaches the fingerprint."""
    import rjieba

    monkeypatch.setattr(segment, "package_dir", lambda name: "")  # jieba's folder not found
    segment.loaded.cache_clear()
    lines = [*segment.CHECK_LINES] * (segment.SWITCH_AFTER // len(segment.CHECK_LINES) + 2)
    cut = segment.RjiebaLines(lambda line: rjieba.cut(line, hmm=True))
    with caplog.at_level("WARNING", logger="scrapy_neardup.fingerprints.segment"):
        joined = [cut(line) for line in lines]
    assert not cut.by_c and joined == [rjieba_joined(line) for line in lines]
    assert "cannot be made" in caplog.text
    monkeypatch.undo()
    segment.loaded.cache_clear()
    assert segment.loaded()


def test_a_line_rjieba_refuses_is_cut_whole_by_the_c_cut():
    """A lone surrogate (rjieba raises on it; folded content text holds none): once switched,
    the C cut cuts the line and loses none of its characters."""
    import rjieba

    lines = [*segment.CHECK_LINES] * (segment.SWITCH_AFTER // len(segment.CHECK_LINES) + 2)
    cut = segment.RjiebaLines(lambda line: rjieba.cut(line, hmm=True))
    for line in lines:
        cut(line)
    assert cut.by_c
    for line in ("中文\udfff测试", "ab\ud800cd", "\ud800"):
        assert cut(line).replace(segment.SEPARATOR, "") == line
