"""The review page as a browser shows it: headless Chromium takes a screenshot, Pillow reads it.

Skipped with a clear reason when ``chromium`` is not installed, unless
``NEARDUP_REQUIRE_CHROMIUM=1`` (CI sets it): then a missing browser fails the test.
"""

from __future__ import annotations

import json

from support import news_corpus
from support.browser import HEIGHT, WIDTH, rgb, screenshot

from scrapy_neardup.cli import main
from scrapy_neardup.review.page import MARK_COLOUR


def test_the_review_page_renders_with_its_marks(tmp_path, capsys):
    records = [{"id": key, "text": body} for key, _, body in news_corpus.corpus()]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    page = tmp_path / "review.html"
    assert main(["dedup", str(source), "-o", str(tmp_path / "out.jsonl"), "--no-progress", "--report", str(page)]) == 0
    image = screenshot(page, tmp_path)
    assert image.size == (WIDTH, HEIGHT)
    counts = {colour: n for n, colour in image.getcolors(WIDTH * HEIGHT)}
    white = counts.get((255, 255, 255), 0)
    assert white < 0.9 * WIDTH * HEIGHT, "the page is (nearly) blank"
    marked = counts.get(rgb(MARK_COLOUR), 0)
    # The first screen holds several pairs, most of each text marked: tens of thousands of pixels.
    assert marked > 20_000, f"only {marked} pixels of the mark colour {MARK_COLOUR}"
    dark = sum(n for colour, n in counts.items() if max(colour) < 100)
    assert dark > 20_000, "little dark text drawn: were the Chinese characters rendered?"
