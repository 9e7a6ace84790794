"""The documentation agrees with the code: every setting documented once, every link resolves.

docs/settings.md has one ``### NEARDUP_*`` heading per setting of ``scrapy_neardup/crawl/settings.py``,
with a ``Type:`` and a ``Default:`` line; a default written as a literal must be the real one.
Every page is rendered with a Markdown parser (markdown-it-py, CommonMark with tables), so a
heading that an unclosed code fence swallows counts as missing, as it is on the rendered page.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from scrapy_neardup.crawl import settings as config

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_DOC = ROOT / "docs" / "settings.md"
PAGES = [ROOT / "README.md", ROOT / "CHANGES.md", *sorted((ROOT / "docs").glob("*.md"))] + [
    ROOT / "benchmarks" / "README.md",
    ROOT / "example_project" / "README.md",
]
SETTING_NAME = re.compile(r"\bNEARDUP_[A-Z][A-Z0-9_]*[A-Z0-9]\b")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def documented_settings() -> dict[str, str]:
    """Each ``### NEARDUP_*`` heading of docs/settings.md with the text under it."""
    sections: dict[str, str] = {}
    parts = re.split(r"^### (\S+)\n", SETTINGS_DOC.read_text(encoding="utf-8"), flags=re.M)
    for name, text in zip(parts[1::2], parts[2::2]):
        assert name not in sections, f"{name} is documented twice in docs/settings.md"
        sections[name] = text.split("\n## ", 1)[0]
    return sections


def settings_read_outside_config() -> set[str]:
    """Names of ``OTHER_SETTINGS`` that some module other than config.py actually reads."""
    package = ROOT / "scrapy_neardup"
    sources = "\n".join(path.read_text(encoding="utf-8") for path in package.rglob("*.py") if path.name != "config.py")
    return {name for name in config.OTHER_SETTINGS if re.search(rf"\b{name}\b", sources)}


def environment_variables() -> set[str]:
    """``NEARDUP_*`` environment variables listed under "Environment variables" in docs/settings.md."""
    text = SETTINGS_DOC.read_text(encoding="utf-8").split("\n## Environment variables\n", 1)
    assert len(text) == 2, "docs/settings.md has no '## Environment variables' section"
    return set(re.findall(r"^\| `(NEARDUP_\w+)` \|", text[1], flags=re.M))


def test_documented_environment_variables_are_read() -> None:
    readers = [*(ROOT / "scrapy_neardup").rglob("*.py"), *(ROOT / "tests").rglob("*.py"), ROOT / ".ci" / "run"]
    sources = "\n".join(path.read_text(encoding="utf-8") for path in readers if path.name != "test_docs.py")
    unread = sorted(
        name for name in environment_variables() if f'"{name}"' not in sources and f"{name}=" not in sources
    )
    assert not unread, f"docs/settings.md lists environment variables nothing reads: {unread}"


def test_every_setting_is_documented_once() -> None:
    documented = set(documented_settings())
    required = set(config.SETTINGS) | settings_read_outside_config()
    assert not required - documented, f"missing from docs/settings.md: {sorted(required - documented)}"
    known = set(config.SETTINGS) | set(config.OTHER_SETTINGS)
    assert not documented - known, f"documented but not in config.py: {sorted(documented - known)}"


@pytest.mark.parametrize("name", sorted(config.SETTINGS))
def test_documented_default_is_the_real_one(name: str) -> None:
    text = documented_settings().get(name)
    assert text is not None, f"{name} is not documented in docs/settings.md"
    assert re.search(r"^Type: ", text, flags=re.M), f"{name}: no 'Type:' line"
    default = re.search(r"^Type: .*Default: (.*)$", text, flags=re.M)
    assert default, f"{name}: no 'Default:' on its 'Type:' line"
    field = {f.name: f for f in dataclasses.fields(config.NearDupConfig)}[name[len("NEARDUP_") :].lower()]
    literal = re.match(r"`([^`]*)`", default.group(1))
    if literal is None:  # a default computed at run time is described in words
        assert field.default_factory is not dataclasses.MISSING, f"{name}: write its default as a literal"
        return
    real = field.default if field.default is not dataclasses.MISSING else field.default_factory()
    documented = ast.literal_eval(literal.group(1))
    assert documented == real, f"{name}: docs say {literal.group(1)}, config.py {real!r}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_setting_names_exist(page: Path) -> None:
    known = set(config.SETTINGS) | set(config.OTHER_SETTINGS) | environment_variables()
    unknown = sorted(set(SETTING_NAME.findall(page.read_text(encoding="utf-8"))) - known)
    assert not unknown, (
        f"{page.relative_to(ROOT)} names {unknown}, neither a setting of config.py nor an environment "
        "variable listed in docs/settings.md"
    )


def rendered(page: Path) -> list[Token]:
    """The page's tokens as a Markdown renderer sees them (CommonMark, with tables)."""
    return MarkdownIt("commonmark").enable("table").parse(page.read_text(encoding="utf-8"))


def headings(page: Path) -> list[tuple[str, str]]:
    """(tag, text) of each heading the rendered page shows: ``("h3", "NEARDUP_STORE")``."""
    tokens = rendered(page)
    return [
        (token.tag, tokens[index + 1].content.strip())
        for index, token in enumerate(tokens)
        if token.type == "heading_open"
    ]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@functools.cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors of the headings of a rendered markdown page (not of lines inside code blocks).
    Kept for the run: a page's links to another page's anchors render that page once."""
    return frozenset(slug(text) for _, text in headings(page))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_code_fence_is_closed(page: Path) -> None:
    """A fence left open turns what follows into code (headings, tables, links), up to the end
    of the page or to the next fence's own closing line, taking the next opening line with it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    unclosed = []
    for token in rendered(page):
        if token.type != "fence" or token.map is None:
            continue
        start, end = token.map
        closing = lines[end - 1].strip() if end - 1 > start else ""
        swallowed = [line for line in token.content.splitlines() if re.match(r"\s*(```|~~~)\S", line)]
        if swallowed or not (closing.startswith(token.markup) and not closing.strip(token.markup[0])):
            unclosed.append(f"line {start + 1}: {lines[start].strip()}")
    assert not unclosed, f"{page.relative_to(ROOT)}: code fences never closed: {unclosed}"


def test_every_setting_has_its_heading_and_anchor() -> None:
    """Each setting is a rendered level-3 heading of docs/settings.md, so #neardup_x links to it."""
    shown = [text for tag, text in headings(SETTINGS_DOC) if tag == "h3" and text.startswith("NEARDUP_")]
    required = set(config.SETTINGS) | settings_read_outside_config()
    missing = sorted(required - set(shown))
    assert not missing, f"docs/settings.md, as rendered, has no heading for {missing}"
    page_anchors = anchors(SETTINGS_DOC)
    assert all(name.lower() in page_anchors for name in required)
    linked = {
        target.split("#", 1)[1]
        for page in PAGES
        for target in LINK.findall(page.read_text(encoding="utf-8"))
        if target.split("#", 1)[0].endswith("settings.md") and "#" in target
    }
    assert linked and linked <= page_anchors, f"links to settings.md anchors it lacks: {sorted(linked - page_anchors)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http(s) and other absolute addresses are not checked offline
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (anchor and anchor not in anchors(linked)):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: links that lead nowhere: {broken}"
