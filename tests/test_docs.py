"""The documentation agrees with the code: every setting documented once, every link resolves.

docs/settings.md has one ``### NEARDUP_*`` heading per setting of ``scrapy_neardup/config.py``,
with a ``Type:`` and a ``Default:`` line; a default written as a literal must be the real one.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

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


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the headings of a markdown page."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


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
