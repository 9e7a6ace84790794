"""Body extraction on real pages: quality (character-bag F1) and speed (CPU ms a page).

    python benchmarks/extraction.py                         # this checkout
    python benchmarks/extraction.py --tree before=/tmp/base --tree now=.   # several source trees, one run
    python benchmarks/extraction.py --show 5                # the worst pages of each set
    python benchmarks/extraction.py --tree before=/tmp/base --tree now=. --interleave zh-gne --rounds 3

Sets (from ``--data``, the shared data directory):

- ``zh-cwce``: 69 Chinese pages with their bodies copied out by hand;
- ``en-aeb``: 181 English news pages with a checked article body;
- ``zh-gne``: 62 Chinese news pages of about 30 sites, no body (speed only);
- ``real-template world``: every template of ``real_templates.py`` (a real page with its
  article cut out) with a long and a short news-world story rendered in, a "相关新闻" list
  and a comment block after it; the truth is the rendered story.

Quality is the character-bag F1 (white space left out) of the extracted text against the
truth: mean and 10th percentile, and for the world the pages whose extraction is mostly not
the story (bag precision under 0.5: navigation, link lists, another story's lead).
Speed is the CPU time of ``html_to_text`` on the page as a ``str``, the least of
``--repeat`` runs, median and mean over the pages of a set. With several ``--tree`` options
each tree runs in its own process, every tree once per round, rounds in turn (``--rounds``),
each page's time the least over the rounds, and each tree's texts are compared page by page
with the first tree's. With ``--interleave`` the trees' processes take
turns page by page instead (speed only): a load that comes and goes falls on every tree alike,
so the ratio of their times holds on a shared machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_templates import (
    DEFAULT_DATA,
    _records,
    bag_f1,
    corpus_stories,
    extraction_pages,
    load_templates,
)

FLOORS = {"zh-cwce": (0.95, 0.85), "en-aeb": (0.97, None), "real-template world": (0.97, None)}
SPEED_FLOOR_MS = 4.0  # median on zh-gne
MOSTLY_NOT_BODY = 0.5  # bag precision under this: the extraction is mostly something else


def _sets(data: Path, world: bool) -> dict[str, list[tuple[str, str, str]]]:
    """Each set as (page id, html, truth) rows; truth is "" where there is none."""
    sets = {
        "zh-cwce": [(r["id"], r["html"], r["text"]) for r in _records(data, "zh-cwce")],
        "en-aeb": [(r["id"], r["html"], r["text"]) for r in _records(data, "en-aeb")],
        "zh-gne": [(r["id"], r["html"], "") for r in _records(data, "zh-gne")],
    }
    if world:
        templates, _ = load_templates(data)
        stories = corpus_stories(data, 200)
        rows = []
        for page, story, html, body in extraction_pages(templates, stories):
            length = "short" if len(story.text) <= 300 else "long"
            rows.append((f"{page.corpus}:{page.page_id} {length}", html, body))
        sets["real-template world"] = rows
    return sets


def measure(sets: dict[str, list[tuple[str, str, str]]], repeat: int) -> dict:
    """Run this process's html_to_text on every page: per page its text's scores and CPU time."""
    html_to_text = _extract_module().html_to_text

    html_to_text(sets["zh-gne"][0][1])  # imports and first-call costs out of the timing
    out: dict[str, list[dict]] = {}
    for name, rows in sets.items():
        results = []
        for page_id, html, truth in rows:
            best = float("inf")
            for _ in range(repeat):
                started = time.process_time()
                text = html_to_text(html)
                best = min(best, time.process_time() - started)
            row = {
                "id": page_id,
                "ms": 1000 * best,
                "chars": len(text),
                "sha1": hashlib.sha1(text.encode()).hexdigest(),
            }
            if truth:
                row["precision"], row["recall"], row["f1"] = bag_f1(text, truth)
            results.append(row)
        out[name] = results
    return out


def _extract_module() -> Any:
    """The extraction module of the tree measured (the working directory of a child): its
    place after the layered layout, or before it."""
    if Path("scrapy_neardup/fingerprints/extract.py").exists() or not Path("scrapy_neardup/extract.py").exists():
        from scrapy_neardup.fingerprints import extract
    else:
        from scrapy_neardup import extract
    return extract


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))] if ordered else float("nan")


def report(label: str, results: dict, show: int) -> list[str]:
    lines = []
    for name, rows in results.items():
        ms = [r["ms"] for r in rows]
        line = f"| {label} | {name} | {len(rows)} | {statistics.median(ms):.2f} | {statistics.mean(ms):.2f} |"
        scored = [r for r in rows if "f1" in r]
        if scored:
            f1 = [r["f1"] for r in scored]
            mostly_other = sum(r["precision"] < MOSTLY_NOT_BODY for r in scored)
            line += f" {statistics.mean(f1):.3f} | {_quantile(f1, 0.1):.3f} | {min(f1):.3f} | {mostly_other} |"
        else:
            line += " - | - | - | - |"
        lines.append(line)
    if show:
        for name, rows in results.items():
            worst = sorted((r for r in rows if "f1" in r), key=lambda r: r["f1"])[:show]
            for r in worst:
                lines.append(
                    f"    worst {label} {name}: {r['id']} F1 {r['f1']:.3f} (P {r['precision']:.2f}, "
                    f"R {r['recall']:.2f}), {r['chars']} chars, {r['ms']:.1f} ms"
                )
    return lines


def _child(tree: str, data: Path, world: bool, repeat: int, out: str) -> None:
    """Measure the source tree ``tree`` in a fresh process (its own scrapy_neardup)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tree, os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, __file__, "--data", str(data), "--repeat", str(repeat), "--child", out]
    if not world:
        command.append("--no-world")
    subprocess.run(command, env=env, check=True, cwd=tree)


def _serve(data: Path, world: bool, repeat: int) -> None:
    """Time pages on request: a line "set index" in, the least CPU ms of ``repeat`` runs out."""
    html_to_text = _extract_module().html_to_text
    sets = _sets(data, world)
    html_to_text(sets["zh-gne"][0][1])
    print("ready", flush=True)
    for line in sys.stdin:
        name, _, index = line.rstrip("\n").rpartition(" ")
        html = sets[name][int(index)][1]
        best = float("inf")
        for _ in range(repeat):
            started = time.process_time()
            html_to_text(html)
            best = min(best, time.process_time() - started)
        print(f"{1000 * best:.4f}", flush=True)


def interleave(trees: list[tuple[str, str]], data: Path, repeat: int, rounds: int, names: list[str]) -> dict:
    """Every page timed in each tree's process in turn (the order rotating page by page);
    per tree and set, each page's least CPU ms over the rounds."""
    workers = {}
    for label, tree in trees:
        tree = str(Path(tree).resolve())
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([tree, os.environ.get("PYTHONPATH", "")]))
        command = [sys.executable, __file__, "--data", str(data), "--repeat", str(repeat), "--no-world", "--serve"]
        workers[label] = subprocess.Popen(
            command, env=env, cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
    for worker in workers.values():
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    counts = {name: sum(1 for _ in _records(data, name)) for name in names}
    ms: dict[str, dict[str, list[float]]] = {
        label: {n: [float("inf")] * c for n, c in counts.items()} for label in workers
    }
    labels = list(workers)
    turn = 0
    for _ in range(rounds):
        for name, count in counts.items():
            for index in range(count):
                turn += 1
                for label in labels[turn % len(labels) :] + labels[: turn % len(labels)]:
                    worker = workers[label]
                    assert worker.stdin is not None and worker.stdout is not None
                    worker.stdin.write(f"{name} {index}\n")
                    worker.stdin.flush()
                    ms[label][name][index] = min(ms[label][name][index], float(worker.stdout.readline()))
    for worker in workers.values():
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    return ms


def report_interleaved(ms: dict, repeat: int, rounds: int) -> None:
    first = next(iter(ms))
    load = os.getloadavg()
    print(
        f"\nCPU ms a page, trees taking turns page by page (least of {repeat} runs x {rounds} rounds); "
        f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min) at the end\n"
    )
    print(f"| tree | set | pages | median ms | mean ms | median / {first}'s | median of page ratios |")
    print("|---|---|---|---|---|---|---|")
    for label, sets in ms.items():
        for name, times in sets.items():
            base = ms[first][name]
            ratios = [t / b for t, b in zip(times, base) if b > 0]
            print(
                f"| {label} | {name} | {len(times)} | {statistics.median(times):.2f} | {statistics.mean(times):.2f} | "
                f"{statistics.median(times) / statistics.median(base):.3f} | {statistics.median(ratios):.3f} |"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="a source tree to measure (repeatable; default: this checkout)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each page; the least CPU time counts")
    parser.add_argument("--rounds", type=int, default=1, help="with several trees: rounds of all of them")
    parser.add_argument("--no-world", dest="world", action="store_false", help="leave out the real-template world")
    parser.add_argument("--show", type=int, default=0, help="list the N worst pages of each set")
    parser.add_argument("--json", type=Path, help="also write every page's figures here")
    parser.add_argument(
        "--interleave",
        nargs="*",
        metavar="SET",
        help="speed only: the trees take turns page by page on these sets (default zh-gne)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        _serve(args.data, args.world, args.repeat)
        return 0
    if args.interleave is not None:
        trees = [t.partition("=")[::2] for t in args.tree]
        if len(trees) < 2:
            parser.error("--interleave needs two --tree options or more")
        ms = interleave(trees, args.data, args.repeat, args.rounds, args.interleave or ["zh-gne"])
        report_interleaved(ms, args.repeat, args.rounds)
        return 0
    if args.child:
        extract = _extract_module()
        results = measure(_sets(args.data, args.world), args.repeat)
        Path(args.child).write_text(json.dumps({"module": extract.__file__, "results": results}), encoding="utf-8")
        return 0

    trees = [t.partition("=")[::2] for t in args.tree] or [
        ("this checkout", str(Path(__file__).resolve().parent.parent))
    ]
    combined: dict[str, dict] = {}
    for round_ in range(args.rounds):
        order = trees[round_ % len(trees) :] + trees[: round_ % len(trees)]
        for label, tree in order:
            out = f"/tmp/extraction-{os.getpid()}-{len(combined)}.json"
            _child(str(Path(tree).resolve()), args.data, args.world, args.repeat, out)
            got = json.loads(Path(out).read_text(encoding="utf-8"))
            os.unlink(out)
            print(f"round {round_ + 1}: {label} ({got['module']})", file=sys.stderr, flush=True)
            if label not in combined:
                combined[label] = got["results"]
            else:
                for name, rows in got["results"].items():
                    for kept, row in zip(combined[label][name], rows):
                        kept["ms"] = min(kept["ms"], row["ms"])
    load = os.getloadavg()[0]
    print(
        f"\nCPU ms a page (least of {args.repeat} runs x {args.rounds} rounds), character-bag F1; "
        f"{os.cpu_count()} cores, load average {load:.1f} at the end\n"
    )
    print("| tree | set | pages | median ms | mean ms | F1 mean | F1 p10 | F1 min | mostly not the body |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, results in combined.items():
        print("\n".join(report(label, results, args.show)))
    first = next(iter(combined))
    for label, results in list(combined.items())[1:]:
        pages = [(a, b) for name in results for a, b in zip(combined[first][name], results[name])]
        differ = [f"{b['id']}" for a, b in pages if a.get("sha1") != b.get("sha1")]
        print(f"\n{label}: the same text as {first} on {len(pages) - len(differ)} of {len(pages)} pages", end="")
        print(f" (differ: {', '.join(differ[:10])}{' ...' if len(differ) > 10 else ''})" if differ else "")
    ok = True
    for results in combined.values():
        for name, (mean_floor, p10_floor) in FLOORS.items():
            scored = [r["f1"] for r in results.get(name, []) if "f1" in r]
            if not scored:
                continue
            ok = (
                ok
                and statistics.mean(scored) >= mean_floor
                and (p10_floor is None or _quantile(scored, 0.1) >= p10_floor)
            )
        ok = ok and statistics.median(r["ms"] for r in results["zh-gne"]) <= SPEED_FLOOR_MS
    print(
        f"\nfloors: F1 mean {', '.join(f'{k} {v[0]}' for k, v in FLOORS.items())}; zh-cwce p10 0.85; "
        f"zh-gne median {SPEED_FLOOR_MS} ms: {'met' if ok else 'NOT met'} by every tree"
    )
    if args.json:
        args.json.write_text(json.dumps(combined, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
