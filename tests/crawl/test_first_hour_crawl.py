"""A crawler engineer's first hour, run as a user runs it: ``scrapy crawl`` in a small project
written to ``tmp_path``, with a storage pipeline of its own behind the pipeline, against the
local news site. What is printed, the exit status and the stats are what the user sees.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, child_env, warm_python
from support.crawls import COMPAT, LEAN, settings_lines
from support.redis_server import free_port

from scrapy_neardup.newsworld.small import REPRINT_OF

SETTINGS = f"""
BOT_NAME = "proj"
SPIDER_MODULES = ["proj.spiders"]
ITEM_PIPELINES = {{
    "proj.pipelines.AuditPipeline": 100,
    "scrapy_neardup.NearDupPipeline": 200,
    "proj.pipelines.StorePipeline": 300,
}}
NEARDUP_WORKERS = 0
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
{settings_lines({**COMPAT, **LEAN})}"""

# A storage pipeline with state, as a project has one: its close_spider needs what its
# open_spider made. Each says when it opens and closes, so a test sees them paired.
PIPELINES = '''
import logging
import sqlite3

from itemadapter import ItemAdapter

logger = logging.getLogger("proj")


class AuditPipeline:
    """Runs before scrapy-neardup: opened before it."""

    def open_spider(self, spider=None):
        self.seen = 0
        logger.info("audit opened")

    def process_item(self, item, spider=None):
        self.seen += 1
        return item

    def close_spider(self, spider=None):
        logger.info("audit closed after %d items", self.seen)


class StorePipeline:
    """Stores what scrapy-neardup lets through; a copy that replaces another takes its row."""

    @classmethod
    def from_crawler(cls, crawler):
        store = cls()
        store.path = crawler.settings.get("STORE_PATH", ":memory:")
        return store

    def open_spider(self, spider=None):
        self.db = sqlite3.connect(self.path)
        self.db.execute("CREATE TABLE IF NOT EXISTS articles (url TEXT PRIMARY KEY, title TEXT, text TEXT)")
        logger.info("store opened")

    def process_item(self, item, spider=None):
        adapter = ItemAdapter(item)
        if adapter.get("replaces"):
            self.db.execute("DELETE FROM articles WHERE url = ?", (adapter["replaces"],))
        self.db.execute(
            "INSERT OR REPLACE INTO articles VALUES (?, ?, ?)",
            (adapter.get("url"), adapter.get("title"), adapter.get("text") or adapter.get("html")),
        )
        return item

    def close_spider(self, spider=None):
        self.db.commit()
        self.db.close()
        logger.info("store closed")
'''

SPIDER = """
from support.local_site import NewsSpider
from scrapy_neardup.fingerprints.extract import extract_text


class News(NewsSpider):
    name = "news"


class Fields(NewsSpider):
    \"\"\"Yields each page's article text (extracted here) and title under the field names given
    (``-a text_as=body``), each page ``repeat`` times under ``url#n``.\"\"\"

    name = "fields"

    def __init__(self, text_as="text", repeat="1", **kwargs):
        super().__init__(**kwargs)
        self.text_as = text_as
        self.repeat = int(repeat)

    def parse(self, response, index):
        title = response.css("title::text").get(default="").strip()
        for copy in range(self.repeat):
            url = response.url if copy == 0 else f"{response.url}#{copy}"
            yield {"url": url, "title": title, self.text_as: extract_text(response)}
        if self.order == "chain" and index + 1 < len(self.page_paths):
            yield self._request(index + 1)
"""

# The small world's articles, crawled in this order (its page of broken markup left out); its
# REPRINT_OF maps each reprint to its first copy.
ARTICLES = [
    "/a/metro.html",
    "/a/canteen.html",
    "/a/flood.html",
    "/a/oranges.html",
    "/a/robots.html",
    "/b/metro.html",
    "/b/canteen.html",
    "/b/oldstreet.html",
    "/c/metro.html",
    "/c/flood.html",
    "/c/eldercare.html",
    "/bad/gbk.html",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (tmp_path / "proj" / "spiders").mkdir(parents=True)
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "settings.py").write_text(SETTINGS)
    (tmp_path / "proj" / "pipelines.py").write_text(PIPELINES)
    (tmp_path / "proj" / "spiders" / "__init__.py").write_text("")
    (tmp_path / "proj" / "spiders" / "news.py").write_text(SPIDER)
    return tmp_path


def scrapy_crawl(project: Path, *options: str, spider: str = "news") -> subprocess.CompletedProcess:
    env = child_env(project)
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    command = [sys.executable, "-m", "scrapy.cmdline", "crawl", spider, *options]
    return warm_python.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=240)


def lines_at(level: str, output: str) -> list[str]:
    return [line.split(f"] {level}: ", 1)[1] for line in output.splitlines() if f"] {level}: " in line]


def stats_of(output: str) -> dict:
    """The stats Scrapy dumps at the end, as a dict (only the plain values)."""
    dump = output.split("Dumping Scrapy stats:\n", 1)[1]
    found = {}
    for key, value in re.findall(r"'([^']+)': ([^,\n}]+)", dump.split("\n}", 1)[0] + "\n}"):
        try:
            found[key] = json.loads(value.replace("'", '"'))
        except ValueError:
            found[key] = value
    return found


# -- start-up failures: one ERROR line, and the project's own pipelines left as they were --------


@pytest.mark.parametrize(
    "options, reason, message",
    [
        (
            ["-s", "NEARDUP_SIMHASH_DISTANCE=40"],
            "neardup_bad_setting",
            "NEARDUP_SIMHASH_DISTANCE: must be between 0 and 15, got 40",
        ),
        (["-s", "NEARDUP_ACTION=delete"], "neardup_bad_setting", "NEARDUP_ACTION: must be one of"),
        (
            ["-s", "NEARDUP_STORE=redis://127.0.0.1:{port}/0", "-s", 'NEARDUP_REDIS_PARAMS={{"retries": 0}}'],
            "neardup_store_unavailable",
            "connection refused by 127.0.0.1:{port}",
        ),
        (  # a worker process, started before the store is opened, ends quietly
            ["-s", "NEARDUP_STORE=redis://127.0.0.1:{port}/0", "-s", "NEARDUP_WORKERS=1"],
            "neardup_store_unavailable",
            "connection refused by 127.0.0.1:{port}",
        ),
        (
            ["-s", "NEARDUP_STORE=redis://127.0.0.1:{port}/abc"],
            "neardup_store_unavailable",
            "the db after the host must be a number, as in redis://host:6379/0, got 'abc'",
        ),
    ],
    ids=["bad-setting", "bad-choice", "redis-down", "redis-down-with-a-worker", "redis-db-not-a-number"],
)
def test_a_start_up_failure_is_one_error_line_beside_a_storage_pipeline(project, local_site, options, reason, message):
    port = free_port()  # nothing listens there
    options = [option.format(port=port) for option in options]
    done = scrapy_crawl(project, "-a", f"root={local_site.root}", "-a", "paths=/a/metro.html", *options)
    assert done.returncode == 1, done.stderr[-3000:]
    errors = lines_at("ERROR", done.stderr)
    assert len(errors) == 1 and message.format(port=port) in errors[0], done.stderr[-3000:]
    assert "Traceback" not in done.stderr and not lines_at("CRITICAL", done.stderr), done.stderr[-4000:]
    assert f"'finish_reason': '{reason}'" in done.stderr
    assert "Crawled (" not in done.stderr  # no page fetched
    # The project's pipelines saw an empty crawl: each closed exactly as often as it opened.
    info = lines_at("INFO", done.stderr)
    for name in ("audit", "store"):
        opened = sum(line == f"{name} opened" for line in info)
        closed = sum(line.startswith(f"{name} closed") for line in info)
        assert opened == closed == 1, (name, info)


# -- items without the text field: loud and early ---------------------------------------------


NO_TEXT_WARNING = (
    "scrapy-neardup: {without} of the first {seen} items have no text in field 'text' (NEARDUP_TEXT_FIELD) "
    "and no HTML in field 'html' (NEARDUP_HTML_FIELD): they pass unchecked, so reprints are not caught. "
    "The fields these items have: 'body', 'title', 'url'; 'body' holds the longest strings: "
    "NEARDUP_TEXT_FIELD = 'body' (or NEARDUP_HTML_FIELD = 'body' for a page's HTML)?"
)


def test_items_without_the_text_field_are_warned_about_after_the_first_twenty(project, local_site):
    paths = ",".join(ARTICLES)
    store = f"leveldb://{project / 'store'}"
    done = scrapy_crawl(
        project, "-a", f"root={local_site.root}", "-a", f"paths={paths}", "-a", "text_as=body", "-a", "repeat=3",
        "-s", f"NEARDUP_STORE={store}", spider="fields",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    warnings = lines_at("WARNING", done.stderr)
    assert warnings == [NO_TEXT_WARNING.format(without=20, seen=20)], done.stderr[-3000:]
    log = done.stderr
    # Said while the crawl runs, not in the closing lines: after the 20th item, before the 21st.
    assert log.index(NO_TEXT_WARNING.format(without=20, seen=20)) < log.index("Closing spider")
    stats = stats_of(log)
    assert stats["neardup/items"] == stats["neardup/no_text"] == 3 * len(ARTICLES)
    # The same crawl with the field named: judged, reprints dropped, no such warning.
    named = scrapy_crawl(
        project, "-a", f"root={local_site.root}", "-a", f"paths={paths}", "-a", "text_as=body",
        "-s", "NEARDUP_TEXT_FIELD=body", "-s", f"NEARDUP_STORE={store}-named", spider="fields",
    )  # fmt: skip
    assert named.returncode == 0 and "have no text" not in named.stderr, named.stderr[-3000:]
    assert stats_of(named.stderr)["neardup/dropped"] == 5


def test_a_short_crawl_without_text_is_warned_about_at_close(project, local_site):
    done = scrapy_crawl(
        project, "-a", f"root={local_site.root}", "-a", "paths=/a/metro.html,/b/metro.html,/a/flood.html",
        "-a", "text_as=body", "-s", "NEARDUP_STORE=memory://", spider="fields",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert lines_at("WARNING", done.stderr) == [NO_TEXT_WARNING.format(without=3, seen=3)]


# -- the close summary adds up; storage that honours `replaces` keeps the better copy ----------

# Each story's copies in the small world, in crawl order, under the one NEARDUP_PREFER = "longest"
# keeps: the cut reprint /c/metro.html (394 content characters) comes first, the complete article
# (581) after it; /bad/gbk.html has 13% more than /b/oldstreet.html, under the 15% it takes.
STORIES = {
    "/a/metro.html": ["/c/metro.html", "/a/metro.html", "/b/metro.html"],
    "/a/flood.html": ["/a/flood.html", "/c/flood.html"],
    "/a/canteen.html": ["/a/canteen.html", "/b/canteen.html"],
    "/b/oldstreet.html": ["/b/oldstreet.html", "/bad/gbk.html"],
    "/a/oranges.html": ["/a/oranges.html"],
}
CRAWL_ORDER = [path for copies in STORIES.values() for path in copies]


def summary_of(output: str) -> tuple[int, dict[str, int], str]:
    """The close summary: items, each part by its label, and what became of them."""
    line = next(line for line in lines_at("INFO", output) + lines_at("WARNING", output) if " items = " in line)
    head, fate = line.removeprefix("scrapy-neardup: ").split("; ")[:2]
    items, parts = head.split(" items = ")
    counted = {}
    for part in parts.split(" + "):
        number, label = part.split(" ", 1)
        counted[label] = int(number)
    return int(items), counted, fate


def stored_rows(path: Path, root: str) -> dict[str, str]:
    import sqlite3

    with sqlite3.connect(path) as db:
        return {url.removeprefix(root): text for url, _, text in db.execute("SELECT * FROM articles")}


def test_the_close_summary_adds_up_and_storage_keeps_the_complete_copy(project, local_site):
    root, paths = local_site.root, ",".join(CRAWL_ORDER)
    store, table = f"NEARDUP_STORE=leveldb://{project / 'store'}", f"STORE_PATH={project / 'articles.sqlite3'}"
    first = scrapy_crawl(
        project, "-a", f"root={root}", "-a", f"paths={paths}", "-s", store, "-s", table,
        "-s", "NEARDUP_PREFER=longest",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr[-3000:]
    items, counted, fate = summary_of(first.stderr)
    assert items == len(CRAWL_ORDER) == sum(counted.values())
    assert counted == {"new stories": 5, "copies replacing their story's stored copy": 1, "duplicates": 4}
    assert fate == f"4 duplicates dropped, {items - 4} passed on"
    # The storage pipeline removed each replaced row: one row a story, its complete copy.
    assert sorted(stored_rows(project / "articles.sqlite3", root)) == sorted(STORIES)

    # A second crawl of the same pages, revisits dropped: nothing new, every item counted once.
    second = scrapy_crawl(
        project, "-a", f"root={root}", "-a", f"paths={paths}", "-s", store, "-s", table,
        "-s", "NEARDUP_PREFER=longest", "-s", "NEARDUP_REVISIT=drop",
    )  # fmt: skip
    assert second.returncode == 0, second.stderr[-3000:]
    items, counted, fate = summary_of(second.stderr)
    assert items == sum(counted.values()) == len(CRAWL_ORDER)
    assert counted == {"new stories": 0, "revisits": 5, "duplicates": 5}  # the replaced copy is a duplicate now
    assert fate == "5 duplicates dropped, 5 revisits dropped, 0 passed on"
    assert sorted(stored_rows(project / "articles.sqlite3", root)) == sorted(STORIES)

    # Tag mode: the duplicates pass tagged; the summary counts them once, not every tagged item.
    tagged = scrapy_crawl(
        project, "-a", f"root={root}", "-a", f"paths={paths}", "-s", f"NEARDUP_STORE=leveldb://{project / 'tagged'}",
        "-s", "NEARDUP_ACTION=tag",
    )  # fmt: skip
    assert tagged.returncode == 0, tagged.stderr[-3000:]
    items, counted, fate = summary_of(tagged.stderr)
    assert counted == {"new stories": 5, "duplicates": 5} and items == 10
    assert fate == "5 duplicates tagged, 10 passed on"
    assert stats_of(tagged.stderr)["neardup/tagged"] == 10


# -- the command line on the crawl's own feed of HTML ------------------------------------------


def test_neardup_dedup_judges_the_crawls_html_feed_as_the_crawl_did(project, local_site):
    """A feed of {url, html} written by the crawl: `neardup dedup` extracts each page as the
    pipeline does (the same Preparer), so it marks the same reprints of the same first copies."""
    root, paths = local_site.root, ",".join(ARTICLES)
    plain = scrapy_crawl(
        project, "-a", f"root={root}", "-a", f"paths={paths}", "-s", "NEARDUP_ENABLED=False", "-o", "feed.jsonl"
    )
    assert plain.returncode == 0, plain.stderr[-3000:]
    tagged = scrapy_crawl(
        project, "-a", f"root={root}", "-a", f"paths={paths}", "-s", "NEARDUP_ACTION=tag",
        "-s", f"NEARDUP_STORE=leveldb://{project / 'crawl-store'}", "-o", "tagged.jsonl",
    )  # fmt: skip
    assert tagged.returncode == 0, tagged.stderr[-3000:]
    command = [sys.executable, "-m", "scrapy_neardup", "dedup", "feed.jsonl", "-o", "marked.jsonl", "--no-progress"]
    done = warm_python.run(command, cwd=project, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == "neardup: records are keyed by their 'url' field (--key-field names another)"
    reprints = sum(path in ARTICLES for path in REPRINT_OF)
    assert (
        done.stderr.splitlines()[-1]
        == f"{len(ARTICLES)} records: {len(ARTICLES) - reprints} unique, {reprints} duplicates, 0 skipped"
    )

    def verdicts(name: str) -> dict[str, str | None]:
        records = [json.loads(line) for line in (project / name).read_text(encoding="utf-8").splitlines()]
        return {r["url"].removeprefix(root): (r["duplicate_of"] or "").removeprefix(root) or None for r in records}

    by_cli, by_crawl = verdicts("marked.jsonl"), verdicts("tagged.jsonl")
    assert by_cli == by_crawl == {path: REPRINT_OF.get(path) for path in ARTICLES}
    # Without the HTML field the same feed gives nothing to judge: exit 4, and why.
    command += ["--html-field", ""]
    none = warm_python.run(command, cwd=project, capture_output=True, text=True, timeout=240)
    assert none.returncode == 4
    assert none.stderr.splitlines()[-1].startswith(
        f"neardup: no record was judged: {len(ARTICLES)} of {len(ARTICLES)} lines skipped "
        f"({len(ARTICLES)} no usable text in field 'text'); the records have the fields 'html', 'url'"
    )


# -- the review page as a person sees it ---------------------------------------------------------


def test_the_review_page_shows_headlines_contents_stories_and_first_copies_crawled_again(project, local_site, tmp_path):
    from support.browser import WIDTH, rgb, screenshot

    from scrapy_neardup.review.page import MARK_COLOUR

    root = local_site.root
    store = f"NEARDUP_STORE=leveldb://{project / 'store'}"
    first = scrapy_crawl(
        project, "-a", f"root={root}", "-a", f"paths={','.join(CRAWL_ORDER)}", "-s", store,
        "-s", "NEARDUP_PREFER=longest", "-s", "NEARDUP_REPORT=first.html", spider="fields",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr[-3000:]
    # The second crawl meets each reprint before its first copy, which is a revisit now; the
    # store kept no texts (NEARDUP_KEEP_TEXT is off), the crawl shows what it saw.
    second = scrapy_crawl(
        project, "-a", f"root={root}", "-a", f"paths={','.join(reversed(CRAWL_ORDER))}", "-s", store,
        "-s", "NEARDUP_PREFER=longest", "-s", "NEARDUP_REPORT=second.html", spider="fields",
    )  # fmt: skip
    assert second.returncode == 0, second.stderr[-3000:]
    titles = {path: title_of(local_site, path) for path in CRAWL_ORDER}

    one = (project / "first.html").read_text(encoding="utf-8")
    # Five stories: the cut copy crawled first is listed no more once the complete one took its place.
    assert "5 stories kept in this run" in one and '<h2 id="stories">Stories kept in this run: 5</h2>' in one
    kept = re.findall(r'<li value="\d+">(.*?) <small>(.*?)</small></li>', one.split('id="stories"')[1])
    assert [html_text(t) for t, _ in kept] == [titles[p] for p in STORY_ORDER]
    assert f"replaces {root}/c/metro.html" in dict(kept)[html.escape(titles["/a/metro.html"])]

    two = (project / "second.html").read_text(encoding="utf-8")
    sections = re.findall(
        r'<section class="pair" data-key="([^"]*)" data-duplicate-of="([^"]*)">(.*?)</section>', two, re.S
    )
    expected = [p for p in reversed(CRAWL_ORDER) if p not in STORIES]  # the copies, in crawl order
    assert [key.removeprefix(root) for key, _, _ in sections] == expected
    for key, first_key, inside in sections:
        copy, kept_copy = key.removeprefix(root), first_key.removeprefix(root)
        assert kept_copy == next(k for k, copies in STORIES.items() if copy in copies)
        heading = re.search(r"<h2 id=\"pair-\d+\">(.*?) <small>duplicate of (.*?)</small></h2>", inside)
        assert heading and html_text(heading.group(1)) == titles[copy]
        assert html_text(heading.group(2)) == titles[kept_copy]
        assert f'<a href="{key}">{key}</a>' in inside and f'<a href="{first_key}">{first_key}</a>' in inside
        assert 'class="text missing"' not in inside  # the first copy, crawled again after it, is shown
        assert "<mark>" in inside
    toc = re.search(r'<nav class="toc">(.*?)</nav>', two, re.S)
    assert toc and len(re.findall(r'<a href="#pair-\d+">', toc.group(1))) == len(expected)
    assert "0 stories kept in this run" in two

    # As a browser shows it: headlines in Chinese, the table of contents, marked passages.
    image = screenshot(project / "second.html", tmp_path)
    counts = {colour: n for n, colour in image.getcolors(WIDTH * 1600)}
    assert counts.get(rgb(MARK_COLOUR), 0) > 20_000
    assert sum(n for colour, n in counts.items() if max(colour) < 100) > 20_000
    shots = os.environ.get("NEARDUP_SCREENSHOT_DIR")
    if shots:
        image.save(Path(shots) / "review-second-crawl.png")


STORY_ORDER = ["/a/metro.html", "/a/flood.html", "/a/canteen.html", "/b/oldstreet.html", "/a/oranges.html"]


def title_of(site, path: str) -> str:
    from urllib.request import urlopen

    with urlopen(site.url(path)) as answer:
        raw = answer.read()
    text = raw.decode("gbk" if path.startswith("/bad/gbk") else "utf-8")
    return html.unescape(re.search(r"<title>(.*?)</title>", text, re.S).group(1).strip())


def html_text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup)).strip()


def recipe_blocks() -> list[str]:
    """The Python blocks of docs/items.md's recipe, "Storage that honours `replaces`"."""
    text = (ROOT / "docs" / "items.md").read_text(encoding="utf-8")
    section = text.split("### Storage that honours `replaces`", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_documented_storage_recipe_keeps_the_complete_copy_of_each_story(project, local_site):
    pipeline, settings, feed_reader = recipe_blocks()
    (project / "proj" / "recipe.py").write_text(pipeline, encoding="utf-8")
    configured: dict = {}
    exec(settings, {}, configured)  # the settings block as a user pastes it
    assert configured["NEARDUP_PREFER"] == "longest"
    pipelines = {
        "proj.recipe.ArticleStorePipeline" if name.startswith("myproject.") else name: order
        for name, order in configured["ITEM_PIPELINES"].items()
    }
    root = local_site.root
    done = scrapy_crawl(
        project, "-a", f"root={root}", "-a", f"paths={','.join(CRAWL_ORDER)}",
        "-s", f"ITEM_PIPELINES={json.dumps(pipelines)}", "-s", f"ARTICLE_DB={project / 'recipe.sqlite3'}",
        "-s", f"NEARDUP_STORE=leveldb://{project / 'store'}", "-s", "NEARDUP_PREFER=longest",
        "-s", "NEARDUP_TEXT_OUT_FIELD=text", "-o", "feed.jsonl",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = stored_rows(project / "recipe.sqlite3", root)
    assert sorted(rows) == sorted(STORIES)  # one row a story, the complete copy
    assert all(len(text) > 300 for text in rows.values())  # the extracted body, handed on
    reader: dict = {}
    exec(feed_reader, reader)
    kept = reader["kept_records"](project / "feed.jsonl")
    assert sorted(record["url"].removeprefix(root) for record in kept) == sorted(STORIES)
