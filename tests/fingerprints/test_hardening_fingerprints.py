"""Hostile texts for fingerprinting: one crafted to be slow is fingerprinted in linear time; a
page nested past the HTML parser's depth gives its story."""

from __future__ import annotations

import json
import sys
import time

import pytest
from support import warm_python

from scrapy_neardup import Fingerprinter
from scrapy_neardup.crawl.settings import NearDupConfig
from scrapy_neardup.fingerprints.extract import html_to_text
from scrapy_neardup.fingerprints.shallow import shallow_html

# Texts made of the words the site-notice scan anchors on (本网, 本报, 本站, rights words),
# in sentences of every length.
UNITS = [
    "本网讯本报记者今天报道，本站转载的消息称版权归本网所有。",
    "本报",
    "本网本报本站。",
    "本文转载自本网，版权所有。\n",
]


@pytest.mark.parametrize("unit", UNITS)
def test_two_megabytes_of_anchor_words_are_fingerprinted_well_within_a_workers_time(unit):
    """The scan searched back to the start of the text from each sentence end: 900 KB took
    138 s, past the 20 s a worker is given (the page passed unchecked), and without workers it
    held the reactor. A generous bound, for a loaded machine: the time a worker is given; the
    scan takes a few seconds (benchmarks measure speed, this only catches a return of the
    quadratic scan, which takes minutes)."""
    fingerprinter = Fingerprinter()
    fingerprinter.fingerprint("预热：词表与内核载入。" * 10)
    body = unit * (2_000_000 // len(unit.encode("utf-8")) + 1)
    started = time.perf_counter()
    fingerprinter.fingerprint(body)
    assert time.perf_counter() - started < NearDupConfig().extract_timeout


# Pages nested deeper than the HTML parser goes (libxml2 stops at 256 open elements).

DEEP_PARAGRAPHS = [
    "江北区今天启用新建的城市防洪堤，全长十二公里，可抵御百年一遇的洪水。",
    "区水务局负责人介绍，工程历时三年，沿线新建泵站四座，改造排水管网二十公里。",
    "今年汛期以来，全区降雨量比常年偏多三成，新堤投用后沿江二十万居民不再受内涝困扰。",
]


def _page(body: str) -> str:
    return f"<html><head><title>防洪堤启用</title></head><body>{body}</body></html>"


def _story() -> str:
    return "<h1>江北新建防洪堤今日启用</h1>" + "".join(f"<p>{p}</p>" for p in DEEP_PARAGRAPHS)


@pytest.mark.parametrize(
    ("open_tag", "close_tag", "depth"),
    [
        ("<div>", "</div>", 254),
        ("<div class='wrap'>", "</div>", 300),
        ("<div><span>", "</span></div>", 1500),
        ("<font color=red>", "", 3000),  # never closed, as old pages leave <font>
        ("<section><!-- <div> -->", "</section>", 400),
    ],
)
def test_a_page_nested_past_the_parsers_depth_gives_its_story_not_nothing(open_tag, close_tag, depth):
    """The parser dropped everything past 256 open elements: an exact copy of a story wrapped
    that deep extracted to nothing and passed as "no text" beside its original."""
    original = html_to_text(_page(_story()))
    deep = html_to_text(_page(open_tag * depth + _story() + close_tag * depth))
    assert original.splitlines() == ["江北新建防洪堤今日启用", *DEEP_PARAGRAPHS]
    assert deep == original


def test_a_deep_copy_of_a_story_is_judged_a_duplicate_of_it(tmp_path):
    """End to end through neardup dedup on a feed of {url, html}: the deep copy is dropped as
    a duplicate of the original, not passed as a page without text."""
    feed = tmp_path / "pages.jsonl"
    records = [
        {"url": "https://a.example/1.html", "html": _page(_story())},
        {"url": "https://b.example/1.html", "html": _page("<div>" * 600 + _story() + "</div>" * 600)},
    ]
    feed.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    done = warm_python.run(
        [sys.executable, "-m", "scrapy_neardup.cli", "dedup", str(feed), "-o", str(out), "--drop", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    kept = [json.loads(line)["url"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert kept == ["https://a.example/1.html"]


def test_shallow_html_keeps_the_top_and_the_text_end_of_a_chain():
    html = "<body>" + "<div>" * 1000 + "<p>正文<b>加粗</b></p>" + "</div>" * 1000 + "</body>"
    made = shallow_html(html)
    assert made.count("<div>") == made.count("</div>") < 200
    assert "<p>正文<b>加粗</b></p>" in made
    assert shallow_html(_page(_story())) == _page(_story())  # a page of ordinary depth is left alone
