"""The package's layers: each folder imports only the floors below it, only the crawl imports
Scrapy (and Twisted, which the entry service's HTTP server uses too). Read from the source
(every import statement, inside functions too), so a lazy import that climbs a floor fails
here as well."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "scrapy_neardup"

# Floor of each part of the package; a module may import its own floor and those below.
# The front ends never import each other, but for the command line starting the service.
FLOORS = {
    "dotted": 0,
    "seconds": 0,
    "interrupts": 0,
    "workerpipes": 0,
    "fingerprints": 1,
    "stores": 2,
    "engine": 3,
    "review": 4,
    "crawl": 5,
    "serve": 5,
    "cli": 6,
}
FRONT_ENDS = {"crawl", "cli", "serve"}
STARTS = {("cli", "serve")}
# The news world is a fixture of the example, the tests and the benchmarks: it stands alone.
ALONE = {"newsworld"}
# Third-party packages and the parts that may import them.
ONLY_IN = {"scrapy": {"crawl"}, "itemadapter": {"crawl"}, "twisted": {"crawl", "serve"}}


def modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts)


def part_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ["scrapy_neardup", *path.relative_to(PACKAGE).parent.parts]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            if module == "scrapy_neardup" or (node.level and not node.module):
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, module))
    return found


def test_every_part_has_a_floor() -> None:
    parts = {part_of(path) for path in modules()} - {"__init__", "__main__"} - ALONE
    assert parts <= set(FLOORS), f"parts without a floor in this test: {sorted(parts - set(FLOORS))}"


@pytest.mark.parametrize("path", modules(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    part = part_of(path)
    if part in ("__init__", "__main__"):
        return  # the package's front door may name anything
    wrong = []
    for line, module in imported(path):
        names = module.split(".")
        if names[0] in ONLY_IN and part not in ONLY_IN[names[0]]:
            wrong.append(f"line {line}: {module} (only {', '.join(sorted(ONLY_IN[names[0]]))} import it)")
        if names[0] != "scrapy_neardup" or len(names) < 2:
            continue
        target = names[1]
        if target == part:
            continue
        if part in ALONE:
            wrong.append(f"line {line}: {module} (the news world imports nothing of the package)")
        elif target in ALONE:
            wrong.append(f"line {line}: {module} (the product never imports the news world)")
        elif target in FRONT_ENDS and part in FRONT_ENDS and (part, target) not in STARTS:
            wrong.append(f"line {line}: {module} (front ends never import each other)")
        elif FLOORS.get(target, 0) > FLOORS[part]:
            wrong.append(f"line {line}: {module} ({target} is above {part})")
    assert not wrong, "\n".join(wrong)
