"""Accuracy of scrapy_neardup's detector on the reprint benchmark, with its peers as baselines.

Every method sees the same stream (benchmarks/reprints.py) in the same run, in arrival order.
Prints markdown tables: precision, recall, F1 and speed per method; false positives by kind;
recall per reprint transformation; and, for the combined detector, the first false
positives and false negatives with the similarity values behind them, for tuning.

    python benchmarks/accuracy.py                      # everything, default thresholds
    python benchmarks/accuracy.py --containment 0.7 --jaccard 0.3
    python benchmarks/accuracy.py --sweep              # which thresholds meet the floors
    python benchmarks/accuracy.py --world real         # end to end on a news world's pages instead
                                                       # (world_accuracy.py: extraction included)
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baselines import (
    IMatch,
    Method,
    MinHashLSHMethod,
    Outcome,
    PublishedNshash,
    SimhashPackage,
    SpotSigs,
    simhash_package_available,
)
from reprints import DEFAULT_DATA, DEFAULT_SEED, SCRIPT_TRANSFORMS, TRANSFORMS, Doc, build_stream, describe, truth

from scrapy_neardup import Detector, Fingerprinter, Recipe, Thresholds, open_store
from scrapy_neardup.engine.verdicts import METHODS
from scrapy_neardup.fingerprints.fingerprint import Fingerprint
from scrapy_neardup.fingerprints.simhash import hamming
from scrapy_neardup.fingerprints.sketch import resemblance

FLOOR_PRECISION = 0.995
FLOOR_RECALL = 0.97
TRANSFORM_ROWS = ["verbatim", *TRANSFORMS, "disclaimer", *SCRIPT_TRANSFORMS, "converted"]


def _rows_of(doc: Doc) -> tuple[str, ...]:
    """The recall rows a reprint counts in: its transformations, "converted" when its script
    was converted (or its original's was), its length class and "all"."""
    converted = ("converted",) if set(doc.transforms) & set(SCRIPT_TRANSFORMS) else ()
    return (*doc.transforms, *converted, f"{doc.length} story", "all")


class EngineMethod(Method):
    """scrapy_neardup's Detector on a fresh store (memory://, or a LevelDB store in a new folder)."""

    def __init__(
        self,
        name: str,
        recipe: Recipe,
        thresholds: Thresholds,
        methods: tuple[str, ...],
        boilerplate_limit: int,
        store: str = "memory",
    ):
        self.name = name
        uri = "memory://"
        if store == "leveldb":
            import atexit
            import shutil
            import tempfile

            folder = tempfile.mkdtemp(prefix="neardup-accuracy-")
            atexit.register(shutil.rmtree, folder, True)
            uri = f"leveldb://{folder}"
        self.detector = Detector(
            open_store(uri, recipe=recipe),
            thresholds=thresholds,
            methods=methods,
            boilerplate_limit=boilerplate_limit,
        )

    def warm_up(self) -> None:
        self.detector.fingerprint("新华社北京电 今天天气晴朗，各地气温回升。" * 3)

    def check(self, key: str, text: str, title: str | None = None) -> Outcome:
        v = self.detector.check(key, text, title=title)
        info = {
            "status": v.status,
            "method": v.method,
            "jaccard": v.jaccard,
            "containment": v.containment,
            "distance": v.distance,
            "chars": v.chars,
        }
        return Outcome(v.is_duplicate, v.duplicate_of, info)


@dataclass
class Score:
    name: str
    seconds: float
    outcomes: list[Outcome]
    tp: int = 0
    fp: int = 0
    fn: int = 0
    wrong_link: int = 0  # right to call it a duplicate, but matched to another story
    fp_kinds: Counter = field(default_factory=Counter)
    fn_transforms: Counter = field(default_factory=Counter)
    fp_docs: list[int] = field(default_factory=list)
    fn_docs: list[int] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def meets_floors(self) -> bool:
        return self.precision >= FLOOR_PRECISION and self.recall >= FLOOR_RECALL


def fp_kind(doc: Doc, match: Doc | None, originals: dict[int, Doc]) -> str:
    """Why a distinct story was taken for a reprint: what it shares with its match."""
    if match is None:
        return "other"
    mine, theirs = originals[doc.story], originals[match.story]
    if mine.quoted_story == match.story or theirs.quoted_story == doc.story:
        return "quote"
    if mine.partner_story == match.story:
        return "topic"
    if doc.disclaimer and match.site == doc.site:
        return "disclaimer"
    return "other"


def score(name: str, docs: list[Doc], dup: list[bool], outcomes: list[Outcome], seconds: float) -> Score:
    s = Score(name, seconds, outcomes)
    by_key = {d.key: d for d in docs}
    originals = {d.story: d for d, is_dup in zip(docs, dup) if not is_dup}
    for i, (doc, is_dup, out) in enumerate(zip(docs, dup, outcomes)):
        match = by_key.get(out.match) if out.match else None
        if out.duplicate and is_dup:
            s.tp += 1
            if match is not None and match.story != doc.story:
                s.wrong_link += 1
        elif out.duplicate:
            s.fp += 1
            s.fp_kinds[fp_kind(doc, match, originals)] += 1
            s.fp_docs.append(i)
        elif is_dup:
            s.fn += 1
            s.fn_transforms.update(doc.transforms)
            s.fn_docs.append(i)
    return s


def run(method: Method, docs: list[Doc]) -> tuple[list[Outcome], float]:
    method.warm_up()
    start = time.perf_counter()
    outcomes = [
        method.check(d.key, d.text, d.title or None)
        if isinstance(method, EngineMethod)
        else method.check(d.key, d.text)
        for d in docs
    ]
    return outcomes, time.perf_counter() - start


def _pct(x: float) -> str:
    return f"{100 * x:.2f}"


def table(header: list[str], rows: list[list[object]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def main_table(scores: list[Score], n_docs: int) -> str:
    rows = [
        [
            s.name,
            _pct(s.precision),
            _pct(s.recall),
            _pct(s.f1),
            s.fp,
            s.fn,
            s.wrong_link,
            f"{n_docs / s.seconds:,.0f}",
            "yes" if s.meets_floors() else "no",
        ]
        for s in scores
    ]
    return table(["method", "precision %", "recall %", "F1 %", "FP", "FN", "wrong link", "docs/s", "floors"], rows)


def fp_table(scores: list[Score]) -> str:
    kinds = ["disclaimer", "quote", "topic", "other"]
    rows = [[s.name, *(s.fp_kinds.get(k, 0) for k in kinds), s.fp] for s in scores]
    return table(["method", *kinds, "all"], rows)


def recall_table(scores: list[Score], docs: list[Doc], dup: list[bool]) -> str:
    """Recall among the reprints that went through each transformation (or length class)."""
    groups: dict[str, list[int]] = {name: [] for name in TRANSFORM_ROWS}
    groups.update({"short story": [], "long story": [], "all": []})
    for i, (doc, is_dup) in enumerate(zip(docs, dup)):
        if not is_dup:
            continue
        for name in _rows_of(doc):
            groups[name].append(i)
    rows = []
    for name, members in groups.items():
        if not members:
            continue
        rows.append(
            [name, len(members), *(_pct(sum(s.outcomes[i].duplicate for i in members) / len(members)) for s in scores)]
        )
    return table(["reprints with", "n", *(s.name for s in scores)], rows)


def _shared_keys(reprint: Fingerprint, original: Fingerprint, recipe: Recipe) -> int:
    """Sentence keys of the reprint (all it looks up) among the n the original was filed under.

    Ignores the boilerplate guard, which can only skip keys.
    """
    return len(set(reprint.sentence_keys) & set(original.sentence_keys[: recipe.nshash_n]))


def diagnose(fingerprinter: Fingerprinter, recipe: Recipe, doc: Doc, original: Doc) -> dict:
    """How a missed reprint compares with its original: the values the detector decides on."""
    a, b = fingerprinter.fingerprint(doc.text), fingerprinter.fingerprint(original.text)
    jaccard, containment = resemblance(a.sketch, b.sketch)
    shared = _shared_keys(a, b, recipe)
    distance = hamming(a.simhash, b.simhash)
    return {
        "jaccard": round(jaccard, 3),
        "containment": round(containment, 3),
        "distance": distance,
        "shared_top_sentences": shared,
        "candidate": bool(shared) or distance <= recipe.simhash_k,
        "chars": min(a.chars, b.chars),
    }


def fp_listing(s: Score, docs: list[Doc], limit: int) -> str:
    by_key = {d.key: d for d in docs}
    originals = {d.story: d for d in docs if d.kind != "reprint"}
    rows = []
    for i in s.fp_docs[:limit]:
        out, doc = s.outcomes[i], docs[i]
        info = out.info
        match = by_key.get(out.match) if out.match else None
        rows.append(
            [
                doc.key,
                doc.kind,
                out.match,
                fp_kind(doc, match, originals),
                info.get("method"),
                info.get("jaccard"),
                info.get("containment"),
                info.get("distance"),
                info.get("chars"),
            ]
        )
    return table(
        ["key", "kind", "duplicate_of", "shares", "method", "jaccard", "containment", "distance", "chars"], rows
    )


def fn_listing(
    s: Score, docs: list[Doc], fingerprinter: Fingerprinter, recipe: Recipe, thresholds: Thresholds, limit: int
) -> str:
    """Every miss diagnosed (candidate found or not, and why verification refused), the first listed."""
    originals = {d.story: d for d in docs if d.kind != "reprint"}
    reasons: Counter = Counter()
    rows = []
    for i in s.fn_docs:
        doc = docs[i]
        d = diagnose(fingerprinter, recipe, doc, originals[doc.story])
        if not d["candidate"]:
            reason = "no candidate"
        elif d["chars"] < thresholds.short_chars:
            reason = "refused (short thresholds)"
        else:
            reason = "refused"
        reasons[reason] += 1
        if len(rows) < limit:
            rows.append(
                [
                    doc.key,
                    ",".join(doc.transforms),
                    d["chars"],
                    d["shared_top_sentences"],
                    d["distance"],
                    d["jaccard"],
                    d["containment"],
                    reason,
                ]
            )
    summary = ", ".join(f"{k}: {n}" for k, n in reasons.most_common()) or "none"
    listing = table(
        ["key", "transforms", "chars", "shared keys", "distance", "jaccard", "containment", "why missed"], rows
    )
    return f"why missed: {summary}\n\n{listing}"


SWEEP_SHORT = ((0.7, 0.4), (0.8, 0.4), (0.8, 0.5), (0.9, 0.6))  # (short containment, short jaccard)


def sweep(docs: list[Doc], dup: list[bool], recipe: Recipe, base: Thresholds, boilerplate_limit: int) -> str:
    """The combined detector over a grid of thresholds, fingerprints computed once."""
    fingerprinter = Fingerprinter(recipe)
    fps = [fingerprinter.fingerprint(d.text, d.title or None) for d in docs]
    rows = []
    for c, j, (sc, sj) in itertools.product((0.4, 0.5, 0.6, 0.7, 0.8), (0.2, 0.3, 0.4), SWEEP_SHORT):
        thresholds = replace(base, containment=c, jaccard=j, short_containment=sc, short_jaccard=sj)
        detector = Detector(
            open_store("memory://", recipe=recipe), thresholds=thresholds, boilerplate_limit=boilerplate_limit
        )
        outcomes = [Outcome(detector.check_fingerprint(d.key, fp).is_duplicate) for d, fp in zip(docs, fps)]
        s = score("", docs, dup, outcomes, 1.0)
        row = [
            c,
            j,
            sc,
            sj,
            _pct(s.precision),
            _pct(s.recall),
            _pct(s.f1),
            s.fp,
            s.fn,
            "yes" if s.meets_floors() else "no",
        ]
        rows.append((s.f1, row))
    rows.sort(key=lambda r: -r[0])
    return table(
        [
            "containment",
            "jaccard",
            "short containment",
            "short jaccard",
            "precision %",
            "recall %",
            "F1 %",
            "FP",
            "FN",
            "floors",
        ],
        [r for _, r in rows],
    )


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))] if ordered else float("nan")


def signals_table(docs: list[Doc], dup: list[bool], fingerprinter: Fingerprinter, recipe: Recipe) -> str:
    """What the detector sees between each reprint and its original, by transformation.

    A reprint can only be caught when it becomes a candidate (a shared top-n sentence, or a
    SimHash within k) and then passes verification (containment and Jaccard estimates).
    """
    originals = {d.story: d for d, is_dup in zip(docs, dup) if not is_dup}
    cache: dict[str, Fingerprint] = {}

    def fp(doc: Doc) -> Fingerprint:
        if doc.key not in cache:
            cache[doc.key] = fingerprinter.fingerprint(doc.text)
        return cache[doc.key]

    groups: dict[str, list[tuple[bool, int, float, float]]] = {name: [] for name in TRANSFORM_ROWS}
    groups.update({"short story": [], "long story": [], "all": []})
    for doc, is_dup in zip(docs, dup):
        if not is_dup:
            continue
        a, b = fp(doc), fp(originals[doc.story])
        jaccard, containment = resemblance(a.sketch, b.sketch)
        shared = _shared_keys(a, b, recipe) > 0
        signal = (shared, hamming(a.simhash, b.simhash), containment, jaccard)
        for name in _rows_of(doc):
            groups[name].append(signal)
    rows = []
    for name, signals in groups.items():
        if not signals:
            continue
        n = len(signals)
        distances = [s[1] for s in signals]
        rows.append(
            [
                name,
                n,
                _pct(sum(s[0] for s in signals) / n),
                _pct(sum(d <= recipe.simhash_k for d in distances) / n),
                _pct(sum(s[0] or s[1] <= recipe.simhash_k for s in signals) / n),
                f"{_quantile(distances, 0.5):.0f} / {_quantile(distances, 0.9):.0f}",
                f"{_quantile([s[2] for s in signals], 0.1):.2f} / {_quantile([s[2] for s in signals], 0.5):.2f}",
                f"{_quantile([s[3] for s in signals], 0.1):.2f} / {_quantile([s[3] for s in signals], 0.5):.2f}",
            ]
        )
    return table(
        [
            "reprints with",
            "n",
            "shares a sentence key %",
            f"SimHash <= {recipe.simhash_k} %",
            "candidate %",
            "distance p50 / p90",
            "containment p10 / p50",
            "jaccard p10 / p50",
        ],
        rows,
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    t = Thresholds()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data directory (default %(default)s)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument(
        "--no-scripts",
        dest="scripts",
        action="store_false",
        help="leave out the Traditional/Simplified conversions (the stream of earlier builds)",
    )
    p.add_argument("--limit", type=int, default=None, help="only the first N documents of the stream")
    p.add_argument("--tokenizer", default="auto", choices=("auto", "jieba", "rjieba"))
    for f in fields(Thresholds):  # every engine threshold, whatever the engine version has
        default = getattr(t, f.name)
        p.add_argument("--" + f.name.replace("_", "-"), type=type(default), default=default, help=f"default {default}")
    p.add_argument("--k", type=int, default=Recipe().simhash_k, help="SimHash Hamming distance")
    p.add_argument("--n", type=int, default=Recipe().nshash_n, help="nshash: longest sentences used")
    p.add_argument("--boilerplate-limit", type=int, default=5)
    p.add_argument("--minhash-thresholds", default="0.5,0.8", help="MinHashLSH thresholds, comma separated")
    p.add_argument("--no-baselines", action="store_true", help="run only scrapy_neardup's detectors")
    p.add_argument("--show", type=int, default=10, help="false positives and negatives listed")
    p.add_argument("--sweep", action="store_true", help="also run the combined detector over a threshold grid")
    p.add_argument(
        "--store", default="memory", choices=("memory", "leveldb"), help="the engine's store (default memory)"
    )
    p.add_argument(
        "--leveldb-flush-entries",
        type=int,
        default=0,
        help="write the LevelDB bucket index's table as a run every N entries (default: the store's own)",
    )
    p.add_argument("--verdicts", type=Path, help="write every method's verdict on every document here (JSON lines)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--world" in argv or any(a.startswith("--world=") for a in argv):
        import world_accuracy

        return world_accuracy.main(argv)
    args = parse_args(argv)
    docs = build_stream(args.data, args.seed, args.scripts)
    if args.limit:
        docs = docs[: args.limit]
    dup = truth(docs)
    recipe = Recipe(tokenizer=args.tokenizer, nshash_n=args.n, simhash_k=args.k).resolved()
    thresholds = Thresholds(**{f.name: getattr(args, f.name) for f in fields(Thresholds)})
    print(f"## Reprint benchmark (seed {args.seed})\n\n{describe(docs)}\n")
    print(f"recipe: {recipe.as_dict()}\nthresholds: {thresholds}\n")

    if args.leveldb_flush_entries:  # runs on disk even at this size (engines that have them)
        try:
            from scrapy_neardup.stores.leveldb import tieredindex
        except ImportError:
            print("(this engine's LevelDB store keeps its buckets in memory: --leveldb-flush-entries ignored)\n")
        else:
            tieredindex.FLUSH_ENTRIES = args.leveldb_flush_entries

    def engine(name: str, methods: tuple[str, ...]) -> EngineMethod:
        return EngineMethod(name, recipe, thresholds, methods, args.boilerplate_limit, args.store)

    methods: list[Method] = [
        engine("scrapy_neardup combined", METHODS),
        engine("scrapy_neardup nshash only", ("nshash",)),
        engine("scrapy_neardup SimHash only", ("simhash",)),
        engine("scrapy_neardup sketch keys only", ("sketch",)),
        engine("scrapy_neardup nshash+SimHash", ("nshash", "simhash")),
    ]
    if not args.no_baselines:
        methods.append(PublishedNshash())
        methods += [IMatch(), SpotSigs()]
        methods += [MinHashLSHMethod(float(t)) for t in args.minhash_thresholds.split(",") if t]
        if simhash_package_available():
            methods.append(SimhashPackage(k=3))
        else:
            print("(the PyPI simhash package is not installed: its row is left out)\n")
    scores = []
    for method in methods:
        outcomes, seconds = run(method, docs)
        scores.append(score(method.name, docs, dup, outcomes, seconds))
        print(f"ran {method.name}: {seconds:.1f} s", file=sys.stderr)
    if args.verdicts:  # every verdict, to compare two engines or stores line by line
        import json

        with open(args.verdicts, "w", encoding="utf-8") as out:
            for s in scores:
                for d, o in zip(docs, s.outcomes):
                    out.write(json.dumps({"method": s.name, "key": d.key, "duplicate_of": o.match}) + "\n")

    print(f"## Accuracy (floors: precision >= {FLOOR_PRECISION}, recall >= {FLOOR_RECALL} combined)\n")
    print(main_table(scores, len(docs)))
    print("\n## False positives by what the two stories share\n")
    print(fp_table(scores))
    print("\n## Recall % by reprint transformation\n")
    print(recall_table(scores, docs, dup))
    combined = scores[0]
    print(f"\n## scrapy_neardup combined: false positives (first {args.show} of {combined.fp})\n")
    print(fp_listing(combined, docs, args.show))
    fingerprinter = Fingerprinter(recipe)
    print("\n## Reprint against its original: the signals the detector decides on\n")
    print(signals_table(docs, dup, fingerprinter, recipe))
    print(f"\n## scrapy_neardup combined: false negatives (first {args.show} of {combined.fn})\n")
    print(fn_listing(combined, docs, fingerprinter, recipe, thresholds, args.show))
    if args.sweep:
        print("\n## Threshold sweep, combined detector (best F1 first)\n")
        print(sweep(docs, dup, recipe, thresholds, args.boilerplate_limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
