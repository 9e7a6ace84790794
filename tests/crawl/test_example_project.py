"""The example project: its news world, and real crawls of it through NearDupPipeline.

The crawls run the way a user runs them (``python run_example.py``, ``scrapy crawl news``) in
a subprocess with ``cwd`` in a copy of ``example_project``, so the user's own ``.scrapy/``
store and ``output/`` are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.crawls import without_unused_extensions

from scrapy_neardup.newsworld import DEFAULT_STORIES, build_world, serve
from scrapy_neardup.newsworld.stories import Story

EXAMPLE = Path(__file__).resolve().parents[2] / "example_project"

CRAWL_TIMEOUT = 600  # seconds; a crawl of the small world takes a few seconds on an idle machine


def _copy_project(tmp_path: Path) -> Path:
    target = tmp_path / "example_project"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".scrapy", "output", "__pycache__"))
    without_unused_extensions(target)
    return target


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _feed(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(cwd))
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=CRAWL_TIMEOUT
    )


# -- the news world alone ---------------------------------------------------------------


def test_world_is_deterministic_and_every_article_is_accounted_for() -> None:
    first, second = build_world(), build_world()
    assert first.pages == second.pages
    assert first.story_of == second.story_of
    assert build_world(seed=1).pages != first.pages
    articles = {p for p, page in first.pages.items() if b'og:type" content="article"' in first.body(p)}
    assert articles == set(first.story_of)
    copies = first.copies()
    assert set(copies) == {s.story_id for s in DEFAULT_STORIES}
    assert any(len(paths) == 1 for paths in copies.values()), "some stories must never be reprinted"
    assert any(len(paths) >= 3 for paths in copies.values())
    # Every article is linked from an index page of its site.
    index_html = "".join(
        first.body(path).decode("utf-8", "replace") for path in first.pages if path not in first.story_of
    )
    assert all(f'href="{path}"' in index_html for path in first.story_of)


def test_world_has_the_hard_negatives() -> None:
    world = build_world()
    # One long disclaimer in the body of every article of one site, whatever the story.
    disclaimer_stories = {world.story_of[p] for p in world.story_of if "免责声明".encode("gbk") in world.body(p)}
    assert len(disclaimer_stories) >= 5
    # s15 quotes one long sentence of s05 word for word.
    quoted = "只要本单元三分之二以上业主同意，并且没有业主提出合理的反对意见"
    stories = {s.story_id: s for s in DEFAULT_STORIES}
    assert quoted in stories["s05"].text and quoted in stories["s15"].text


def test_given_stories_build_a_larger_world_with_quotes() -> None:
    stories = [
        Story(
            f"g{i:03d}",
            f"标题{i}",
            (
                f"第{i}篇的第一段。" * 30 + "这是一句足够长的、只属于这篇文章的话，编号" + str(i) + "。",
                f"第{i}篇的第二段。" * 30,
                f"第{i}篇的第三段。" * 30,
                f"第{i}篇的第四段。" * 30,
            ),
        )
        for i in range(40)
    ]
    world = build_world(stories=stories, reprints=(2, 4), per_page=7)
    copies = world.copies()
    assert len(copies) == 40
    assert all(3 <= len(paths) <= 5 for paths in copies.values())
    # Every 10th story quotes the longest sentence of the story before it, and only those.
    quoting = {sid for sid, story in world.stories.items() if "“" in story.text}
    assert quoting == {"g009", "g019", "g029", "g039"}
    assert "“这是一句足够长的、只属于这篇文章的话，编号8。”" in world.stories["g009"].text


def test_server_serves_pages_with_their_charset_and_404s() -> None:
    world = build_world()
    server, base_url = serve(world)
    try:
        gbk_page = next(p for p in world.story_of if isinstance(world.pages[p], bytes))
        with urllib.request.urlopen(base_url.rstrip("/") + gbk_page) as response:
            assert response.headers["Content-Type"] == "text/html"
            assert response.read() == world.pages[gbk_page]
        with urllib.request.urlopen(base_url + "bczx/?page=2") as response:
            assert "charset=utf-8" in response.headers["Content-Type"]
            assert response.read().decode("utf-8") == world.pages["/bczx/?page=2"]
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(base_url + "no/such/page.html")
        assert error.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


# -- real crawls -----------------------------------------------------------------------


def test_run_example_keeps_every_story_once(tmp_path: Path) -> None:
    """The world's portal posts excerpts first; the run ends with the complete articles stored."""
    project = _copy_project(tmp_path)
    result = _run(["run_example.py"], project)
    assert result.returncode == 0, result.stdout + result.stderr
    world = build_world(excerpt_every=3)
    excerpts = {path for path, site in world.site_of.items() if site == "kx"}
    assert excerpts

    passed = _feed(project / "output" / "articles.jsonl")
    replaced = {item["replaces"] for item in passed if item.get("replaces")}
    # An excerpt crawled before its complete article passed, and was replaced; one crawled after
    # it was dropped as its reprint.
    assert {_path(item["url"]) for item in passed} & excerpts <= {_path(url) for url in replaced}
    kept = [item for item in passed if item["url"] not in replaced]
    kept_stories = sorted(world.story_of[_path(item["url"])] for item in kept)
    assert kept_stories == sorted(world.copies()), "each story kept exactly once, none lost"
    # The storage pipeline deleted the replaced rows: the table holds the kept copies, no excerpt.
    with sqlite3.connect(project / "output" / "news.sqlite3") as db:
        rows = {url for (url,) in db.execute("SELECT url FROM articles")}
    assert rows == {item["url"] for item in kept}
    assert not {_path(url) for url in rows} & excerpts

    tagged = _feed(project / "output" / "tagged.jsonl")
    assert sorted(_path(item["url"]) for item in tagged) == sorted(world.story_of), "tag mode keeps every page"
    for item in tagged:
        if item["duplicate_of"]:
            assert world.story_of[_path(item["duplicate_of"])] == world.story_of[_path(item["url"])]
    gone = {item["replaces"] for item in tagged if item.get("replaces")}
    firsts = sorted(world.story_of[_path(i["url"])] for i in tagged if not i["duplicate_of"] and i["url"] not in gone)
    assert firsts == sorted(world.copies())
    # similar_id is one id per story, shared by all its copies.
    ids: dict[str, set] = {}
    for item in tagged:
        ids.setdefault(world.story_of[_path(item["url"])], set()).add(item["similar_id"])
    assert all(len(v) == 1 for v in ids.values()) and len({next(iter(v)) for v in ids.values()}) == len(ids)
    assert "every story exactly once" in result.stdout
    # Run again, as a user does: the example deletes its store on purpose, and nothing is reported lost.
    again = _run(["run_example.py"], project)
    assert again.returncode == 0 and "every story exactly once" in again.stdout, again.stdout + again.stderr
    assert "the stories stored since are forgotten" not in again.stdout + again.stderr


def test_scrapy_crawl_news_and_a_second_run_on_the_same_store(tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    store = f"leveldb://{tmp_path / 'store'}"
    world = build_world()

    def crawl(output: str) -> list[dict]:
        server, base_url = serve(world)  # a new port each time: new URLs, same stories
        try:
            result = _run(
                [
                    "-m",
                    "scrapy.cmdline",
                    "crawl",
                    "news",
                    "-a",
                    f"base_url={base_url}",
                    "-s",
                    f"NEARDUP_STORE={store}",
                    "-O",
                    output,
                ],
                project,
            )
        finally:
            server.shutdown()
            server.server_close()
        assert result.returncode == 0, result.stderr[-3000:]
        return _feed(project / output)

    passed = crawl("first.jsonl")
    replaced = {item["replaces"] for item in passed if item.get("replaces")}  # a cut copy came first
    kept = [item for item in passed if item["url"] not in replaced]
    assert sorted(world.story_of[_path(i["url"])] for i in kept) == sorted(world.copies())
    assert set(passed[0]) == {"url", "title", "html"}  # -O writes whole items

    # The store remembers: a later crawl of the same stories, at other URLs, keeps nothing.
    assert crawl("second.jsonl") == []
