"""Short entries (a script library: lines of 50 to 150 characters): does an edited copy find
its original first, and are unrelated lines that share a common phrase kept apart?

Lines are People's Daily sentences joined into lines of 50 to 150 characters; ``--entries``
of them are stored (the service's check-and-add, text kept), others are held out. Then:

- edited copies of stored lines, each with every edit at once: ``--changes`` characters
  changed, a clause added (from another line) or dropped, punctuation changed, and the width
  of digits, letters and punctuation changed; counted as found when the original is the first
  entry ``Detector.query`` lists (what ``POST /check`` shows), and as called a duplicate of it
  when the check's verdict names it; the same per single kind of edit, to see which one costs;
- held-out lines that share a run of at least ``--phrase-chars`` characters with a stored line
  they are otherwise unlike (difflib ratio of their letters and digits under 0.5): a false
  duplicate when the check calls one a duplicate of such a line;
- lines of a script library that share a stock phrase (written here, the way a customer
  service script starts or ends its lines): held-out lines and stored lines given the same
  phrases; a false duplicate when a line is called a duplicate of one whose body differs.

    python benchmarks/short_entries.py                       # the engine's defaults
    python benchmarks/short_entries.py --min-chars 50        # the thresholds of a crawl
"""

from __future__ import annotations

import argparse
import difflib
import random
import re
import sys
import time
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import add_data_option, load_articles

from scrapy_neardup import Detector, Thresholds, open_store
from scrapy_neardup.newsworld import transforms

_SENTENCE = re.compile(r"(?<=[。！？；])")
_CLAUSE = re.compile(r"(?<=[，、：；])")
COMMON = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质"
PHRASES = [
    "您好，感谢您的耐心等待",
    "温馨提示：请以页面公告为准",
    "请您放心，我们会尽快为您处理",
    "如有疑问请拨打客服热线咨询",
    "本活动最终解释权归主办方所有",
    "感谢您对我们工作的理解和支持",
    "请保持电话畅通以便工作人员联系您",
    "非常抱歉给您带来不便",
]


def content(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


def unlike(a: str, b: str) -> bool:
    """Lines that are not one another's copy: under half their letters and digits in common order."""
    return difflib.SequenceMatcher(None, content(a), content(b), autojunk=False).ratio() < 0.5


def lines_of(articles: list[dict], low: int = 50, high: int = 150) -> list[str]:
    """Consecutive sentences of a paragraph joined into lines of ``low`` to ``high`` characters."""
    found: dict[str, None] = {}
    for article in articles:
        for paragraph in article["text"].split("\n"):
            line = ""
            for sentence in (s.strip() for s in _SENTENCE.split(paragraph)):
                if not sentence:
                    continue
                if len(line) + len(sentence) > high:
                    if len(line) >= low:
                        found.setdefault(line)
                    line = ""
                line += sentence
                if len(line) >= low:
                    found.setdefault(line)
                    line = ""
    return [line for line in found if low <= len(line) <= high]


# ---- the edits ----


def change_chars(line: str, rng: random.Random, count: int) -> str:
    places = [i for i, c in enumerate(line) if "\u4e00" <= c <= "\u9fff"]
    chars = list(line)
    for i in rng.sample(places, min(count, len(places))):
        chars[i] = rng.choice([c for c in COMMON if c != chars[i]])
    return "".join(chars)


def change_clause(line: str, rng: random.Random, donor: str, drop: bool) -> str:
    """A clause dropped (never the only one, nor more than 40% of the line) or one added from ``donor``."""
    clauses = [c for c in _CLAUSE.split(line) if c]
    droppable = [i for i, c in enumerate(clauses) if len(clauses) > 1 and len(c) <= 0.4 * len(line)]
    if drop and droppable:
        del clauses[rng.choice(droppable)]
        joined = "".join(clauses)
        return joined if joined[-1] in "。！？；" else joined[:-1] + "。"
    added = [c for c in _CLAUSE.split(donor) if c and 4 <= len(c) <= 30] or [donor[:12] + "，"]
    clause = rng.choice(added).rstrip("。！？；") + "，"
    clauses.insert(rng.randrange(len(clauses)), clause)
    return "".join(clauses)


def change_punctuation(line: str, rng: random.Random) -> str:
    marks = {
        "，": ["、", ",", " ", ""],
        "。": ["！", ".", "；"],
        "：": [":", "，"],
        "；": ["，", ";"],
        "、": ["，", ","],
    }
    chars = list(line)
    places = [i for i, c in enumerate(chars) if c in marks]
    for i in rng.sample(places, max(1, len(places) // 2)) if places else []:
        chars[i] = rng.choice(marks[chars[i]])
    return "".join(chars)


def change_width(line: str, rng: random.Random) -> str:
    table = (
        transforms.to_half_width(transforms.ASCII) if rng.random() < 0.5 else transforms.to_full_width(transforms.ASCII)
    )
    return transforms.convert_width([line], table)[0]


def edited(line: str, rng: random.Random, donor: str, kinds: tuple[str, ...], changes: int) -> str:
    if "clause" in kinds:
        line = change_clause(line, rng, donor, drop=rng.random() < 0.5)
    if "chars" in kinds:
        line = change_chars(line, rng, rng.randint(1, changes))
    if "punctuation" in kinds:
        line = change_punctuation(line, rng)
    if "width" in kinds:
        line = change_width(line, rng)
    return line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_option(parser)
    parser.add_argument("--entries", type=int, default=7000)
    parser.add_argument("--copies", type=int, default=2000)
    parser.add_argument("--held-out", type=int, default=3000)
    parser.add_argument("--changes", type=int, default=3, help="characters changed in a copy: 1 to this many")
    parser.add_argument("--phrase-chars", type=int, default=8)
    parser.add_argument(
        "--min-chars",
        type=int,
        default=Thresholds.entry_min_chars,
        help="Thresholds.min_chars (default: neardup serve's, for entries)",
    )
    parser.add_argument("--seed", type=int, default=1998)
    parser.add_argument("--store", default="memory://")
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    lines = lines_of(load_articles(args.data))
    rng.shuffle(lines)
    stored_lines, held = lines[: args.entries], lines[args.entries : args.entries + args.held_out]
    detector = Detector(open_store(args.store, "short-entries-bench"), Thresholds(min_chars=args.min_chars))
    started = time.perf_counter()
    kept: dict[str, str] = {}
    for index, line in enumerate(stored_lines):
        verdict = detector.check_fingerprint(f"line-{index}", detector.fingerprint(line), text=line)
        if verdict.stored:
            kept[f"line-{index}"] = line
    took = time.perf_counter() - started
    print(
        f"## Short entries: {len(lines):,} lines of 50-150 characters (seed {args.seed}), min_chars {args.min_chars}\n"
    )
    print(
        f"{len(kept):,} of {len(stored_lines):,} lines stored ({len(stored_lines) - len(kept)} not: a copy of a line "
        f"stored before, or too short to judge), {len(stored_lines) / took:,.0f} lines/s\n"
    )

    keys = list(kept)
    originals = rng.sample(keys, min(args.copies, len(keys)))
    print("| copies edited by | copies | original listed first | called a duplicate of it | too short to judge |")
    print("|---|---|---|---|---|")
    all_kinds = ("chars", "clause", "punctuation", "width")
    for kinds in [all_kinds, ("chars",), ("clause",), ("punctuation", "width")]:
        first = duplicate = short = 0
        misses = []
        for key in originals:
            copy = edited(kept[key], rng, kept[rng.choice(keys)], kinds, args.changes)
            similar = detector.query(copy, k=10)
            if detector.fingerprint(copy).chars < args.min_chars:
                short += 1
            if similar and similar[0].key == key:
                first += 1
            elif len(misses) < 3:
                misses.append((kept[key], copy, [(s.key == key, s.similarity, s.jaccard) for s in similar[:2]]))
            duplicate += any(s.duplicate and s.key == key for s in similar)
        n = len(originals)
        label = "all at once" if kinds == all_kinds else " + ".join(kinds)
        print(f"| {label} | {n:,} | **{first / n:.2%}** | {duplicate / n:.2%} | {short / n:.2%} |")
        if kinds == all_kinds:
            worst = misses
    print()

    grams: dict[str, list[str]] = {}
    for key, line in kept.items():
        text = content(line)
        for i in range(len(text) - args.phrase_chars + 1):
            grams.setdefault(text[i : i + args.phrase_chars], []).append(key)
    sharing = false = 0
    examples = []
    for line in held:
        text = content(line)
        others = {
            k for i in range(len(text) - args.phrase_chars + 1) for k in grams.get(text[i : i + args.phrase_chars], [])
        }
        unrelated = {k for k in others if unlike(line, kept[k])}
        if not unrelated:
            continue
        sharing += 1
        wrong = [s for s in detector.query(line, k=10) if s.duplicate and s.key in unrelated]
        if wrong:
            false += 1
            if len(examples) < 3:
                examples.append((line, kept[wrong[0].key]))
    print(
        f"- held-out lines sharing a run of {args.phrase_chars}+ characters with an unlike stored line: "
        f"{sharing:,}; called a duplicate of such a line: **{false} ({false / max(1, sharing):.2%})**"
    )

    scripted = {}
    for index, key in enumerate(keys[: args.held_out]):
        phrase = PHRASES[index % len(PHRASES)]
        line = (
            phrase + ("，" if index % 2 else "。") + kept[key]
            if index % 3
            else kept[key].rstrip("。") + "，" + phrase + "。"
        )
        scripted[f"script-{index}"] = line
        detector.check_fingerprint(f"script-{index}", detector.fingerprint(line), text=line)
    false_scripted = asked = 0
    for index, body in enumerate(held):
        phrase = PHRASES[index % len(PHRASES)]
        line = phrase + "，" + body if index % 3 else body.rstrip("。") + "，" + phrase + "。"
        asked += 1
        wrong = [
            s
            for s in detector.query(line, k=10)
            if s.duplicate and unlike(body, scripted.get(s.key, kept.get(s.key, "")))
        ]
        if wrong:
            false_scripted += 1
            if len(examples) < 6:
                examples.append((line, scripted.get(wrong[0].key, kept.get(wrong[0].key))))
    print(
        f"- held-out lines given one of {len(PHRASES)} stock phrases, against {len(scripted):,} stored lines with the "
        f"same phrases: {asked:,}; called a duplicate of an unlike line: **{false_scripted} ({false_scripted / asked:.2%})**\n"
    )
    for original, copy, listed in worst:
        print(f"missed: {original!r}\n   copy: {copy!r}\n   listed (is original, similarity, jaccard): {listed}")
    for line, other in examples:
        print(f"false duplicate: {line!r}\n             of: {other!r}")


if __name__ == "__main__":
    main()
