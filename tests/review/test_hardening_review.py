"""The review page's files: it replaces or removes only pages it wrote, listed by its first page,
and names its further pages around any other file."""

from __future__ import annotations

import re
from pathlib import Path

from scrapy_neardup.review.files import is_own_page, listed_pages
from scrapy_neardup.review.page import Pair, Report

BODY = "北京市今天召开新闻发布会，介绍城市更新行动的最新进展。" * 40


def report(path: Path, duplicates: int) -> Report:
    """A report of ``duplicates`` sections, about 2 a page."""
    made = Report(str(path), page_bytes=20_000)
    for number in range(duplicates):
        made.add(Pair(f"copy-{number}", BODY + str(number), f"first-{number}", BODY, "nshash", 0.98, 0.95, 1))
    return made


def write(path: Path, duplicates: int) -> tuple[list[Path], list[str]]:
    """Write a report; its pages and the names it left alone."""
    made = report(path, duplicates)
    try:
        return [Path(page) for page in made.write()], made.left_alone
    finally:
        made.close()


def links(page: Path) -> dict[str, str]:
    return dict(re.findall(r'rel="(prev|next)" href="([^"]+)"', page.read_text(encoding="utf-8")))


def test_further_pages_are_named_around_files_neardup_did_not_write(tmp_path):
    foreign = tmp_path / "review-2.html"
    foreign.write_text("<p>someone's page</p>", encoding="utf-8")
    pages, left_alone = write(tmp_path / "review.html", 10)
    assert [p.name for p in pages[:3]] == ["review.html", "review-3.html", "review-4.html"]
    assert left_alone == [str(foreign)]
    assert foreign.read_text(encoding="utf-8") == "<p>someone's page</p>"
    assert links(pages[0]) == {"next": "review-3.html"} and links(pages[1]) == {
        "prev": "review.html",
        "next": "review-4.html",
    }
    assert listed_pages(str(pages[0])) == [str(p) for p in pages[1:]]
    assert all(is_own_page(str(p)) for p in pages) and not is_own_page(str(foreign))


def test_another_report_named_like_a_further_page_is_not_replaced(tmp_path):
    """review-2.html may be a report of its own: a page neardup wrote, but not one that
    review.html listed."""
    other, _ = write(tmp_path / "review-2.html", 1)
    before = other[0].read_bytes()
    pages, left_alone = write(tmp_path / "review.html", 6)
    assert tmp_path / "review-2.html" not in pages and left_alone == [str(tmp_path / "review-2.html")]
    assert other[0].read_bytes() == before
    write(tmp_path / "review.html", 1)  # a smaller run removes its own further pages only
    assert other[0].read_bytes() == before
    assert not any(p.exists() for p in pages[1:])


def test_a_rerun_replaces_its_own_pages_and_removes_the_ones_it_no_longer_needs(tmp_path):
    larger, _ = write(tmp_path / "review.html", 12)
    (tmp_path / "review-99.html").write_text("kept", encoding="utf-8")
    smaller, left_alone = write(tmp_path / "review.html", 4)
    assert smaller == larger[: len(smaller)] and left_alone == []
    assert not any(p.exists() for p in larger[len(smaller) :])
    assert (tmp_path / "review-99.html").read_text(encoding="utf-8") == "kept"


def test_a_listed_page_replaced_by_another_file_since_is_left_alone(tmp_path):
    pages, _ = write(tmp_path / "review.html", 8)
    pages[2].write_text("the user's own file now", encoding="utf-8")
    (tmp_path / "outside.html").write_text("outside", encoding="utf-8")
    first = pages[0].read_text(encoding="utf-8")  # a manifest edited to name a file outside the report
    pages[0].write_text(
        first.replace('content="review-2.html/', 'content="../outside.html/review-2.html/'), encoding="utf-8"
    )
    write(tmp_path / "review.html", 1)
    assert pages[2].read_text(encoding="utf-8") == "the user's own file now"
    assert (tmp_path / "outside.html").read_text(encoding="utf-8") == "outside"
    assert not pages[1].exists() and not pages[3].exists()
