"""The review page: `neardup dedup --report` on every store, NEARDUP_REPORT in real crawls,
and the pages' markup (sections, escaping, splitting)."""

from __future__ import annotations

import html
import json
import logging
import re
from pathlib import Path

import pytest
import pytest_twisted
from support import news_corpus
from support.crawls import run, settings_for
from support.local_site import ARTICLES, REPRINT_OF, NewsSpider

from scrapy_neardup.cli import main
from scrapy_neardup.review.page import Pair, Report

SECTION = re.compile(r'<section class="pair" data-key="([^"]*)" data-duplicate-of="([^"]*)">(.*?)</section>', re.S)
TEXT = re.compile(r'<div class="(text[^"]*)" data-key="([^"]*)">(.*?)</div>', re.S)


def sections(*pages: Path) -> dict[str, dict]:
    """Each section by its copy's key: first copy's key, its two texts (class, key, body)."""
    found = {}
    for page in pages:
        for key, first, inside in SECTION.findall(page.read_text(encoding="utf-8")):
            texts = TEXT.findall(inside)
            found[html.unescape(key)] = {"first": html.unescape(first), "texts": texts}
    return found


def plain(body: str) -> str:
    """A text element's words: markup out, entities decoded, heading out."""
    return html.unescape(re.sub(r"<[^>]+>", "", body.split("</h3>", 1)[-1]))


def write_lines(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def news(selected) -> list[dict]:
    return [{"id": key, "text": body} for key, story, body in news_corpus.corpus() if selected(key)]


def test_dedup_report_pairs_each_duplicate_with_its_first_copy(store_uri, tmp_path, capsys):
    """Copies of stories in the same input: their first copies come from the run itself."""
    records = news(lambda key: True)
    write_lines(tmp_path / "in.jsonl", records)
    page = tmp_path / "review.html"
    assert (
        main(
            [
                "dedup",
                str(tmp_path / "in.jsonl"),
                "-o",
                str(tmp_path / "out.jsonl"),
                "--store",
                store_uri,
                "--no-progress",
                "--report",
                str(page),
            ]
        )
        == 0
    )
    assert f"review page: {page}" in capsys.readouterr().err
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    duplicates = {r["id"]: r["duplicate_of"] for r in out if r["duplicate_of"]}
    found = sections(page)
    assert {key: s["first"] for key, s in found.items()} == duplicates
    texts = {r["id"]: r["text"] for r in records}
    for key, section in found.items():
        (left_class, left_key, left), (right_class, right_key, right) = section["texts"]
        assert (left_class, right_class) == ("text", "text")
        assert (html.unescape(left_key), html.unescape(right_key)) == (section["first"], key)
        assert plain(left) == texts[section["first"]] and plain(right) == texts[key]
        marks = re.findall(r"<mark>(.*?)</mark>", right, re.S)
        assert marks and all(html.unescape(m) in texts[key] for m in marks)
    document = page.read_text(encoding="utf-8")
    assert f"<tr><th>duplicate</th><td>{len(duplicates)}</td></tr>" in document
    assert "<script" not in document and "http://" not in document.split("<body>")[0]  # nothing fetched


def test_a_later_run_shows_first_copies_only_when_the_store_kept_them(store_uri, tmp_path, capsys):
    """Originals in one run, reprints in the next: the first copies come from the store."""
    originals = news(lambda key: key.startswith("https://a."))
    write_lines(tmp_path / "a.jsonl", originals)
    write_lines(tmp_path / "b.jsonl", news(lambda key: not key.startswith("https://a.")))
    for kept, namespace in ((True, "kept"), (False, "plain")):
        first_run = [
            "dedup",
            str(tmp_path / "a.jsonl"),
            "-o",
            str(tmp_path / "a.out"),
            "--store",
            store_uri,
            "--namespace",
            namespace,
            "--no-progress",
        ]
        assert main(first_run + ["--keep-text"] * kept) == 0
        page = tmp_path / f"{namespace}.html"
        assert (
            main(
                [
                    "dedup",
                    str(tmp_path / "b.jsonl"),
                    "-o",
                    str(tmp_path / "b.out"),
                    "--store",
                    store_uri,
                    "--namespace",
                    namespace,
                    "--no-progress",
                    "--report",
                    str(page),
                ]
            )
            == 0
        )
        found = sections(page)
        assert found
        for section in found.values():
            first_class, _first_key, first_body = section["texts"][0]
            if kept:
                assert first_class == "text" and plain(first_body) in [r["text"] for r in originals]
            else:
                assert first_class == "text missing" and "not kept" in first_body
        exported = [json.loads(line) for line in _export(store_uri, namespace, tmp_path, capsys)]
        texts = {r["id"]: r["text"] for r in originals}
        # The originals' texts when kept; new stories of the second run were stored without.
        assert {r["key"]: r.get("text") for r in exported if "text" in r} == (texts if kept else {})


def test_a_later_run_shows_the_text_of_the_copy_named_not_of_the_copy_it_replaced(store_uri, tmp_path, capsys):
    """With --prefer longest the complete article replaced the portal's excerpt in the first
    run; a reprint in the next run names the complete article, and its text is shown beside
    it, not the excerpt's."""
    from support.corpus import reprint, text

    excerpt = "来源：滨江日报\n" + "\n".join(text("museum").split("\n")[:3])
    write_lines(tmp_path / "a.jsonl", [{"id": "portal", "text": excerpt}, {"id": "source", "text": text("museum")}])
    write_lines(tmp_path / "b.jsonl", [{"id": "third", "text": reprint("museum")}])
    common = ["--store", store_uri, "--no-progress"]
    first = ["dedup", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "a.out"), "--keep-text", "--prefer", "longest"]
    assert main(first + common) == 0
    page = tmp_path / "review.html"
    assert (
        main(["dedup", str(tmp_path / "b.jsonl"), "-o", str(tmp_path / "b.out"), "--report", str(page)] + common) == 0
    )
    found = sections(page)
    assert found["third"]["first"] == "source"
    first_class, first_key, first_body = found["third"]["texts"][0]
    assert (first_class, html.unescape(first_key), plain(first_body)) == ("text", "source", text("museum"))
    exported = [json.loads(line) for line in _export(store_uri, "default", tmp_path, capsys)]
    assert [(record["key"], record.get("text")) for record in exported] == [("source", text("museum"))]


def _export(store_uri: str, namespace: str, tmp_path: Path, capsys) -> list[str]:
    target = tmp_path / f"{namespace}.jsonl"
    assert main(["export", "--store", store_uri, "--namespace", namespace, "-o", str(target)]) == 0
    capsys.readouterr()
    return target.read_text(encoding="utf-8").splitlines()


def test_keys_and_texts_are_escaped(tmp_path, capsys):
    story = news(lambda key: key.startswith("https://a."))[0]["text"]
    hostile = '"><script>alert(1)</script><b x="'
    write_lines(
        tmp_path / "in.jsonl",
        [
            {"id": hostile + "1", "text": story + "<img src=x onerror=alert(2)>"},
            {"id": hostile + "2", "text": story + "<iframe>"},
        ],
    )
    page = tmp_path / "review.html"
    assert (
        main(
            [
                "dedup",
                str(tmp_path / "in.jsonl"),
                "-o",
                str(tmp_path / "out.jsonl"),
                "--no-progress",
                "--report",
                str(page),
            ]
        )
        == 0
    )
    document = page.read_text(encoding="utf-8")
    for raw in ("<script", "<img", "<iframe", "<b x"):
        assert raw not in document
    assert list(sections(page)) == [hostile + "2"]


def test_a_large_run_is_split_into_linked_pages(tmp_path):
    path = tmp_path / "review.html"
    body = "北京市今天召开新闻发布会，介绍城市更新行动的最新进展。" * 40
    larger = Report(str(path), page_bytes=20_000)
    for number in range(60):
        larger.add(Pair(f"copy-{number}", body + str(number), f"first-{number}", body, "nshash", 0.98, 0.95, 1))
    earlier = larger.write()
    larger.close()
    (tmp_path / "review-90.html").write_text("stale", encoding="utf-8")  # no page of the report: kept
    report = Report(str(path), page_bytes=20_000)
    for number in range(30):
        report.add(Pair(f"copy-{number}", body + str(number), f"first-{number}", body, "nshash", 0.98, 0.95, 1))
    pages = [Path(p) for p in report.write()]
    report.close()
    assert len(pages) > 2 and pages[0] == path and pages[1] == tmp_path / "review-2.html"
    assert all(p.stat().st_size < 40_000 for p in pages)
    assert sorted(sections(*pages)) == sorted(f"copy-{n}" for n in range(30))
    first, second = pages[0].read_text(encoding="utf-8"), pages[1].read_text(encoding="utf-8")
    assert "<h2>Verdicts</h2>" in first and "<h2>Verdicts</h2>" not in second
    assert 'rel="next" href="review-2.html"' in first and 'rel="prev"' not in first
    assert 'rel="prev" href="review.html"' in second
    assert len(earlier) > len(pages) and not any(Path(p).exists() for p in earlier[len(pages) :])  # removed
    assert (tmp_path / "review-90.html").exists()


@pytest.mark.parametrize("action, workers", [("drop", 0), ("tag", 0), ("drop", 1)])
@pytest_twisted.inlineCallbacks
def test_a_crawl_writes_its_review_page_when_the_spider_closes(local_site, tmp_path, action, workers):
    """With worker processes, the bodies they extracted come back for the page."""
    page = tmp_path / "review.html"
    result = yield run(
        settings_for(tmp_path / "store", NEARDUP_REPORT=str(page), NEARDUP_ACTION=action, NEARDUP_WORKERS=workers),
        NewsSpider,
        root=local_site.root,
        paths=ARTICLES,
    )
    found = sections(page)
    assert {key: s["first"] for key, s in found.items()} == {
        local_site.url(copy): local_site.url(first) for copy, first in REPRINT_OF.items()
    }
    if action == "drop":
        assert sorted(str(item["url"]) for item, _ in result.dropped) == sorted(found)
    for section in found.values():
        assert [c for c, _, _ in section["texts"]] == ["text", "text"]  # seen in this crawl
        assert not any("&lt;" in shown for _, _, shown in section["texts"])  # the bodies, not the HTML
        assert "<mark>" in section["texts"][1][2]
    document = page.read_text(encoding="utf-8")
    assert f"<tr><th>unique</th><td>{len(ARTICLES) - len(REPRINT_OF)}</td></tr>" in document
    assert result.stats["finish_reason"] == "finished"


@pytest.mark.parametrize("backend", ["leveldb", "redis"])
@pytest_twisted.inlineCallbacks
def test_a_second_crawl_shows_first_copies_the_store_kept(local_site, tmp_path, request, backend):
    """LevelDB checks one by one; Redis checks in batches (the texts go with the batch). The
    first crawl extracts in a worker process, which sends the bodies back to be kept."""
    store = f"leveldb://{tmp_path}/store" if backend == "leveldb" else request.getfixturevalue("redis_url")
    originals = [p for p in ARTICLES if p not in REPRINT_OF]
    copies = [p for p in ARTICLES if p in REPRINT_OF]
    namespace = f"kept-{tmp_path.name}"
    yield run(
        settings_for(store, NEARDUP_KEEP_TEXT=True, NEARDUP_NAMESPACE=namespace, NEARDUP_WORKERS=1),
        NewsSpider,
        root=local_site.root,
        paths=originals,
    )
    page = tmp_path / "review.html"
    yield run(
        settings_for(store, NEARDUP_REPORT=str(page), NEARDUP_NAMESPACE=namespace),
        NewsSpider,
        root=local_site.root,
        paths=copies,
    )
    found = sections(page)
    assert sorted(found) == sorted(local_site.url(p) for p in copies)
    assert all(s["texts"][0][0] == "text" and "<mark>" in s["texts"][0][2] for s in found.values())
    assert not any("&lt;" in s["texts"][0][2] for s in found.values())  # the kept body, not the HTML


class PageBecomesAFolder(NewsSpider):
    """Makes a folder of the review page's path with its first item: after the page was
    checked at open, so that it cannot be written at close."""

    def make_item(self, response):
        Path(self.settings["NEARDUP_REPORT"]).mkdir(exist_ok=True)
        return super().make_item(response)


@pytest_twisted.inlineCallbacks
def test_a_page_that_cannot_be_written_is_logged_and_the_crawl_ends_as_usual(local_site, tmp_path, caplog):
    page = tmp_path / "review.html"
    result = yield run(
        settings_for(tmp_path / "store", NEARDUP_REPORT=str(page)),
        PageBecomesAFolder,
        root=local_site.root,
        paths=ARTICLES[:6],
    )
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].startswith(f"scrapy-neardup: cannot write the review page {page}")
    assert result.stats["finish_reason"] == "finished" and len(result.items) == 5
