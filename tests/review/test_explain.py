"""`neardup explain A B` through the command line: verdict, signals, marked passages."""

import difflib
import itertools
import json
import re

import opencc
import pytest
from support.corpus import ARTICLES, BANNER, DISCLAIMER, EDITOR, reprint, text, with_disclaimer
from support.news_corpus import SIGNATURE

from scrapy_neardup.cli import main
from scrapy_neardup.review.marking import MAX_ALIGN_CHARS, FoldedTexts, align, align_each

NAMES = list(ARTICLES)


def marked(output, label):
    """The passages between [[ and ]] in the part of the output showing text ``label``."""
    part = output.split(f"=== {label}:", 1)[1].split("\n=== ", 1)[0]
    return re.findall(r"\[\[(.*?)\]\]", part, re.S)


def run(capsys, *argv):
    code = main(["explain", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_reprint_page_is_a_duplicate_with_its_passages_marked(tmp_path, capsys):
    first = tmp_path / "a.txt"
    first.write_text(with_disclaimer(NAMES[0]), encoding="utf-8")
    page = tmp_path / "b.html"
    body = "".join(f"<p>{line}</p>" for line in reprint(NAMES[0], cut=0.9).splitlines())
    page.write_text(
        f"<html><head><title>t</title></head><body><nav><a href='/'>首页</a></nav><article>{body}</article></body></html>",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, first, page)
    assert code == 0
    assert out.startswith("verdict: duplicate")
    assert "found by nshash" in out
    assert "首页" not in out  # the page went through the extraction dedup uses
    passages = marked(out, "B")
    assert passages and all(len(p) >= 6 for p in passages)
    for passage in passages:  # every passage is in A, in B's wording (here the same)
        assert re.sub(r"\W", "", passage) in re.sub(r"\W", "", with_disclaimer(NAMES[0]))
    assert not any(BANNER in p or EDITOR in p for p in passages)  # B's additions stay unmarked
    signals = dict(line.split(": ", 1) for line in out.splitlines()[1:5])
    assert float(signals["containment"].split()[0]) >= 0.7


def test_a_changed_comma_and_script_do_not_break_a_passage(tmp_path, capsys):
    story = text(NAMES[1])
    copy = opencc.OpenCC("s2t").convert(story).replace("，", "、", 3)
    (tmp_path / "a.txt").write_text(story, encoding="utf-8")
    (tmp_path / "b.txt").write_text(copy, encoding="utf-8")
    code, out, _ = run(capsys, tmp_path / "a.txt", tmp_path / "b.txt", "--color", "never")
    assert code == 0 and out.startswith("verdict: duplicate")
    first_line = story.splitlines()[0]
    # The first sentence, Traditional characters and changed commas included, is one passage.
    assert marked(out, "A")[0].startswith(first_line)
    assert marked(out, "B")[0].startswith(opencc.OpenCC("s2t").convert(first_line).replace("，", "、", 3))


def test_stories_sharing_a_disclaimer_are_not_duplicates_and_only_it_is_marked(tmp_path, capsys):
    (tmp_path / "a.txt").write_text(with_disclaimer(NAMES[0]), encoding="utf-8")
    (tmp_path / "b.txt").write_text(with_disclaimer(NAMES[1]), encoding="utf-8")
    code, out, _ = run(capsys, tmp_path / "a.txt", tmp_path / "b.txt", "--color", "never")
    assert code == 0
    assert out.startswith("verdict: not a duplicate")
    assert [p for p in marked(out, "B") if len(p) > 20] == [DISCLAIMER.rstrip("。")]  # content to content


def test_colour_on_request_and_plain_markers_otherwise(tmp_path, capsys):
    (tmp_path / "a.txt").write_text(text(NAMES[2]), encoding="utf-8")
    (tmp_path / "b.txt").write_text(reprint(NAMES[2]), encoding="utf-8")
    _, coloured, _ = run(capsys, tmp_path / "a.txt", tmp_path / "b.txt", "--color", "always")
    assert "\x1b[1;31m" in coloured and "[[" not in coloured
    _, plain, _ = run(capsys, tmp_path / "a.txt", tmp_path / "b.txt")  # captured: not a terminal
    assert "\x1b[" not in plain and "[[" in plain


def test_html_page_sets_the_texts_side_by_side_escaped(tmp_path, capsys):
    hostile = "<script>alert(1)</script>"
    (tmp_path / "a.txt").write_text(text(NAMES[3]) + "\n" + hostile, encoding="utf-8")
    (tmp_path / "b.txt").write_text(reprint(NAMES[3]) + "\n" + hostile, encoding="utf-8")
    page = tmp_path / "explain.html"
    code, _, _ = run(capsys, tmp_path / "a.txt", tmp_path / "b.txt", "--format", "text", "--html", page)
    assert code == 0
    document = page.read_text(encoding="utf-8")
    assert "<script" not in document and "&lt;/script" in document.replace("<mark>", "").replace("</mark>", "")
    section = re.search(r'<section class="pair" data-key="([^"]*)" data-duplicate-of="([^"]*)">', document)
    assert section.groups() == (str(tmp_path / "b.txt"), str(tmp_path / "a.txt"))
    assert f'class="text" data-key="{tmp_path / "a.txt"}"' in document
    assert document.count("<mark>") >= 2


def test_boilerplate_of_a_store_is_named_and_left_out(store_uri, tmp_path, capsys):
    """A long line every story of a site ends with: in the store, five stories filed it."""
    signed = {name: f"{text(name)}\n{SIGNATURE}" for name in NAMES}
    source = tmp_path / "in.jsonl"
    with open(source, "w", encoding="utf-8") as handle:
        for name in NAMES[:5]:  # five stories file the site line: boilerplate
            handle.write(json.dumps({"id": name, "text": signed[name]}, ensure_ascii=False) + "\n")
    assert main(["dedup", str(source), "-o", str(tmp_path / "out.jsonl"), "--store", store_uri, "--no-progress"]) == 0
    capsys.readouterr()
    (tmp_path / "a.txt").write_text(signed[NAMES[5]], encoding="utf-8")
    (tmp_path / "b.txt").write_text(signed[NAMES[0]], encoding="utf-8")
    code, out, _ = run(capsys, tmp_path / "a.txt", tmp_path / "b.txt")
    assert code == 0 and "shared sentence keys (nshash): 1" in out  # two texts alone share it
    code, out, _ = run(capsys, tmp_path / "a.txt", tmp_path / "b.txt", "--store", store_uri)
    assert code == 0
    assert "boilerplate left out: 1" in out
    assert "shared sentence keys (nshash): 0" in out
    assert out.startswith("verdict: not a duplicate")


def test_long_texts_are_marked_within_the_cap(tmp_path, capsys):
    story = with_disclaimer(NAMES[0]) + "\n"
    long_text = story * (MAX_ALIGN_CHARS // len(story) + 20)
    (tmp_path / "a.txt").write_text(long_text, encoding="utf-8")
    (tmp_path / "b.txt").write_text(long_text, encoding="utf-8")
    code, out, _ = run(capsys, tmp_path / "a.txt", tmp_path / "b.txt")
    assert code == 0
    assert "marked within the first 100,000 characters" in out
    assert out.split("=== B:", 1)[1].rstrip().endswith(story.rstrip())  # the rest shown unmarked


@pytest.mark.parametrize(
    "content, message",
    [(None, "cannot read"), (b"\x00\x01\x02binary" * 50, "is not text"), (b"  \n", "has no text")],
)
def test_bad_input_is_one_clear_line(tmp_path, capsys, content, message):
    (tmp_path / "a.txt").write_text(text(NAMES[0]), encoding="utf-8")
    other = tmp_path / "b.txt"
    if content is not None:
        other.write_bytes(content)
    code, out, err = run(capsys, tmp_path / "a.txt", other)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_store_that_is_not_there_is_refused(tmp_path, capsys):
    (tmp_path / "a.txt").write_text(text(NAMES[0]), encoding="utf-8")
    code, _, err = run(capsys, tmp_path / "a.txt", tmp_path / "a.txt", "--store", f"leveldb://{tmp_path}/none")
    assert code == 2 and "there is no LevelDB store" in err
    assert not (tmp_path / "none").exists()


def test_a_page_that_is_not_an_article_is_not_judged(tmp_path, capsys):
    from support.real_template_pages import menu_page

    first = tmp_path / "a.txt"
    first.write_text(with_disclaimer(NAMES[0]), encoding="utf-8")
    page = tmp_path / "nav.html"
    page.write_text(menu_page(), encoding="utf-8")
    code, out, _ = run(capsys, first, page)
    assert code == 0
    assert out.startswith("not judged: B's extracted text is not an article (menu)")
    assert "neardup/not_article" in out


def test_stored_texts_folded_once_mark_the_same_passages_and_stay_within_their_bound():
    """A service keeps the folded stored texts for the next check: the passages must be the
    ones found without it, and the oldest texts give way once the bound is reached."""
    stored = [text(name) for name in NAMES]
    checked = [reprint(name, edits=3) for name in NAMES]
    bound = 2 * max(len(t) for t in stored)
    kept = FoldedTexts(max_chars=bound)
    for _ in range(2):  # folded on the first round, taken from ``kept`` (or folded again) on the second
        for copy in checked:
            assert align_each(copy, stored, kept=kept) == align_each(copy, stored)
            assert kept.chars <= bound
            assert 1 <= len(kept) <= 2
    last = stored[-1]
    assert kept.folded(last) is kept.folded(last)  # the most recent stays kept
    assert align_each(checked[0], []) == []


def test_the_compiled_sequence_matcher_marks_exactly_as_difflib(monkeypatch):
    """cydifflib (extra "fast") stands in for difflib only if every passage comes out the same."""
    pytest.importorskip("cydifflib")
    from scrapy_neardup.review import marking

    assert marking.sequence_matcher().__module__.startswith("cydifflib")
    converted = opencc.OpenCC("s2t").convert
    pairs = [(reprint(name, edits=4), text(name)) for name in NAMES]
    pairs += [(converted(with_disclaimer(name)), text(other)) for name, other in itertools.pairwise(NAMES)]
    pairs += [(text(name) + "，" + text(name)[::-1], BANNER + text(name)[: len(text(name)) // 2]) for name in NAMES]
    compiled = [align(a, b) for a, b in pairs]
    monkeypatch.setattr(marking, "sequence_matcher", lambda: difflib.SequenceMatcher)
    assert [align(a, b) for a, b in pairs] == compiled
    assert any(alignment.pairs for alignment in compiled)


def test_the_c_kernels_content_of_a_text_is_the_numpy_paths(monkeypatch):
    """Marking folds a text to its content characters, their places and clauses in one C pass
    when the kernel is built: the same values as the numpy path, whatever the characters."""
    from scrapy_neardup.fingerprints.kernel import kernel
    from scrapy_neardup.review import marking

    if kernel is None:
        pytest.skip("the C kernel was not built")
    odd = [
        "",
        "，。",
        "a",
        "ab\u200bcd",
        "é",
        "e\u0301x",
        "𠀀abc",
        "ﬁne 中文",
        "\ud800x中",
        "Ａ１２，３。\t\n x",
        "中\u00ad文",
    ]
    samples = [text(name) for name in NAMES] + [reprint(name, edits=3) for name in NAMES] + odd
    samples += [BANNER + text(name).replace("，", "\u200b，\u3000") + DISCLAIMER for name in NAMES]
    compiled = [marking._Content(sample) for sample in samples]
    monkeypatch.setattr(marking, "kernel", None)
    for sample, fast in zip(samples, compiled):
        slow = marking._Content(sample)
        assert (fast.chars, fast.where.tolist(), fast.clauses()) == (slow.chars, slow.where.tolist(), slow.clauses())
        assert fast.where.dtype == slow.where.dtype
    assert any(len(content.clauses()[0]) > 10 for content in compiled)
