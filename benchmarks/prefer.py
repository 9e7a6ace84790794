"""Keeping the best copy of a story (NEARDUP_PREFER) on real Chinese news (People's Daily, 1998).

A portal posts a cut-down excerpt of an article under a source line minutes before the source
site publishes it whole; a third site then reprints it nearly whole. Beside those stories run
control stories whose complete copy comes first (the excerpt later), and single stories that
nobody reprints. With ``--prefer longest`` the complete copy should replace the excerpt and the
third copy should name it; the control excerpts stay plain duplicates.

    python benchmarks/prefer.py --prefer longest           # the floors, on memory://
    python benchmarks/prefer.py --prefer first --dump first.jsonl   # verdicts, to compare runs
    python benchmarks/prefer.py --store redis://localhost:6379/9     # Redis, in batches of 64

Figures go to benchmarks/README.md. Everything is drawn from one seeded ``random.Random``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reprints import DEFAULT_DATA, SITES, _banner, _editor, _make_stories, load_articles

from scrapy_neardup import DUPLICATE, Detector, Fingerprinter, open_store
from scrapy_neardup.newsworld import transforms

FLOOR_REPLACED = 0.95  # complete late copies that replace the excerpt
FLOOR_THIRD = 0.95  # third copies naming the complete copy
FLOOR_CONTROL = 0.99  # control excerpts that are plain duplicates of the complete copy
FLOOR_PRECISION = 0.995  # duplicates whose duplicate_of is a copy of their own story

PREFER_SHARE = 0.3  # long stories whose excerpt comes first
CONTROL_SHARE = 0.3  # long stories whose complete copy comes first
MEAN_DELAY = 25.0  # stories published between two copies, on average


@dataclass
class Doc:
    key: str
    story: int
    text: str
    role: str  # single | excerpt | complete | third
    group: str  # prefer (excerpt first) | control (complete first) | single
    time: float


def _excerpt(paragraphs: list[str], rng: random.Random, source: str) -> list[str]:
    """60-75% of the article, cut at a sentence end, under a source line."""
    kept = transforms.cut_near_end(paragraphs, rng.uniform(0.60, 0.75))
    return [rng.choice([f"来源：{source}", f"（来源：{source}）", f"本文来源：{source}"]), *kept]


def _near_complete(paragraphs: list[str], rng: random.Random, site: str, title: str) -> list[str]:
    """A reprint of 93-99% of the article with the usual dressing."""
    kept = transforms.cut_near_end(paragraphs, rng.uniform(0.93, 0.99))
    return _editor(_banner(kept, rng, site, title), rng)


def _site_text(paragraphs: list[str], site: tuple) -> str:
    return "\n".join(paragraphs + ([site[2]] if site[2] else []))


def build_stream(data: Path | str, seed: int) -> list[Doc]:
    rng = random.Random(seed)
    stories = _make_stories(load_articles(Path(data)), rng)
    docs: list[Doc] = []
    for story in stories:
        paragraphs = story.body.split("\n")
        home, portal, third = rng.sample(SITES, 3)
        group = "single"
        if story.kind == "original" and story.length == "long" and len(paragraphs) >= 3:
            draw = rng.random()
            group = "prefer" if draw < PREFER_SHARE else "control" if draw < PREFER_SHARE + CONTROL_SHARE else "single"
        when = float(story.story)
        complete = Doc(
            f"{home[0]}/{story.story:04d}", story.story, _site_text(paragraphs, home), "complete", group, when
        )
        if group == "single":
            docs.append(replace(complete, role="single"))
            continue
        excerpt = Doc(
            f"{portal[0]}/{story.story:04d}-excerpt",
            story.story,
            _site_text(_excerpt(paragraphs, rng, home[1]), portal),
            "excerpt",
            group,
            when,
        )
        later = when + 0.01 + rng.expovariate(1.0 / MEAN_DELAY)
        if group == "prefer":
            complete.time = later
        else:
            excerpt.time = later
        near = _near_complete(paragraphs, rng, third[1], story.title)
        docs += [
            excerpt,
            complete,
            Doc(
                f"{third[0]}/{story.story:04d}-copy",
                story.story,
                _site_text(near, third),
                "third",
                group,
                max(excerpt.time, complete.time) + 0.01 + rng.expovariate(1.0 / MEAN_DELAY),
            ),
        ]
    docs.sort(key=lambda d: d.time)
    return docs


def judge(docs: list[Doc], store_uri: str, prefer: str) -> tuple[list, float]:
    """Every document's verdict in arrival order (batches of 64, as neardup dedup checks them),
    and the seconds the checks took."""
    fingerprinter = Fingerprinter()
    prints = [(doc.key, fingerprinter.fingerprint(doc.text)) for doc in docs]
    namespace = f"prefer-{uuid.uuid4().hex[:8]}"
    with open_store(store_uri, namespace) as store:
        if prefer == "first":  # no prefer argument: runs on versions before NEARDUP_PREFER too
            detector = Detector(store, fingerprinter=fingerprinter)
        else:
            from scrapy_neardup.engine.prefer import policy_from

            detector = Detector(store, fingerprinter=fingerprinter, prefer=policy_from(prefer))
        started = time.perf_counter()
        verdicts = []
        for start in range(0, len(prints), 64):
            verdicts += detector.check_many(prints[start : start + 64])
        seconds = time.perf_counter() - started
    return verdicts, seconds


def figures(docs: list[Doc], verdicts: list) -> dict[str, tuple[int, int]]:
    """(hits, out of) for each floor, and the plain counts beside them."""
    story_of = {doc.key: doc.story for doc in docs}
    copies = {(doc.story, doc.role): doc.key for doc in docs}
    counts: dict[str, list[int]] = {
        name: [0, 0] for name in ("replaced", "third", "control", "precision", "single_false", "control_third")
    }

    def count(name: str, hit: bool) -> None:
        counts[name][0] += int(hit)
        counts[name][1] += 1

    for doc, verdict in zip(docs, verdicts):
        replaces = getattr(verdict, "replaces", None)
        if verdict.status == DUPLICATE:
            count("precision", story_of.get(verdict.duplicate_of) == doc.story)
        if doc.group == "single":
            count("single_false", verdict.status == DUPLICATE)
        elif doc.group == "prefer" and doc.role == "complete":
            count("replaced", replaces == copies[doc.story, "excerpt"])
        elif doc.group == "prefer" and doc.role == "third":
            count("third", verdict.status == DUPLICATE and verdict.duplicate_of == copies[doc.story, "complete"])
        elif doc.group == "control" and doc.role == "excerpt":
            plain = verdict.status == DUPLICATE and replaces is None
            count("control", plain and verdict.duplicate_of == copies[doc.story, "complete"])
        elif doc.group == "control" and doc.role == "third":
            count(
                "control_third", verdict.status == DUPLICATE and verdict.duplicate_of == copies[doc.story, "complete"]
            )
    return {name: (hit, total) for name, (hit, total) in counts.items()}


def ratios(docs: list[Doc], verdicts: list) -> list[float]:
    """Content characters of each story's complete copy over its excerpt's: how far above the
    15% of ``longest`` the stream's replacements are."""
    chars = {(doc.story, doc.role): verdict.chars for doc, verdict in zip(docs, verdicts)}
    return sorted(
        chars[story, "complete"] / max(1, chars[story, "excerpt"]) for story, role in chars if role == "excerpt"
    )


def _share(pair: tuple[int, int]) -> str:
    hit, total = pair
    return f"{hit}/{total} = {100.0 * hit / max(1, total):.2f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="the shared data directory")
    parser.add_argument("--seed", type=int, nargs="+", default=[1998])
    parser.add_argument("--prefer", default="longest", help="first, longest, source or a dotted path")
    parser.add_argument("--store", default="memory://")
    parser.add_argument("--dump", help="write each verdict as a JSON line (to compare runs)")
    args = parser.parse_args(argv)
    failed = False
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None  # noqa: SIM115 - closed at the end
    for seed in args.seed:
        docs = build_stream(args.data, seed)
        verdicts, seconds = judge(docs, args.store, args.prefer)
        found = figures(docs, verdicts)
        digest = hashlib.sha256()
        for verdict in verdicts:
            shown = {
                "key": verdict.key,
                "status": verdict.status,
                "duplicate_of": verdict.duplicate_of,
                "replaces": getattr(verdict, "replaces", None),
            }
            line = json.dumps(shown, ensure_ascii=False, sort_keys=True)
            digest.update(line.encode("utf-8"))
            if dump:
                dump.write(line + "\n")
        groups = {
            g: sum(1 for d in docs if d.group == g and d.role in ("complete", "single"))
            for g in ("prefer", "control", "single")
        }
        print(f"## seed {seed}, --prefer {args.prefer}, {args.store.split('://')[0]}://")
        print(
            f"{len(docs)} documents: {groups['prefer']} stories excerpt first, {groups['control']} complete first, "
            f"{groups['single']} single; checked in {seconds:.1f} s ({len(docs) / seconds:,.0f} docs/s)"
        )
        print(f"verdicts sha256 {digest.hexdigest()[:16]} (status, duplicate_of, replaces of every document)")
        spread = ratios(docs, verdicts)
        print(
            f"complete / excerpt content characters: min {spread[0]:.2f}, median {spread[len(spread) // 2]:.2f}, "
            f"max {spread[-1]:.2f}"
        )
        rows = [
            ("complete late copies replacing the excerpt", "replaced", FLOOR_REPLACED),
            ("third copies naming the complete copy", "third", FLOOR_THIRD),
            ("control excerpts: plain duplicates of the complete copy", "control", FLOOR_CONTROL),
            ("precision of duplicate_of (a copy of its own story)", "precision", FLOOR_PRECISION),
            ("control third copies naming the complete copy", "control_third", None),
            ("single stories called duplicates", "single_false", None),
        ]
        print("| figure | measured | floor |\n|---|---|---|")
        for label, name, floor in rows:
            hit, total = found[name]
            share = hit / max(1, total)
            ok = "" if floor is None else (f">= {100 * floor:g}%" + ("" if share >= floor else " **missed**"))
            if floor is not None and args.prefer == "longest" and share < floor:
                failed = True
            print(f"| {label} | {_share(found[name])} | {ok} |")
        print()
    if dump:
        dump.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
