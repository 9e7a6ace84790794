"""A stored record's bytes by part, and the CPU time of reading and writing one.

Records are made as the detector makes them: each stream is checked by ``Detector.check`` into
a LevelDB store of its own, and every record it holds is taken. Three streams: news-length
fillers (``corpus.FillerTexts``, keys ``filler-N`` as ``speed.py`` and ``store_ab.py`` fill
stores), news (the People's Daily articles of the corpus's first half joined to news length,
``corpus.news_length_docs``, under URL keys) and the hand-copied bodies of zh-cwce's 69
Chinese web pages (under URL keys). For each: the mean bytes a record by part
(``DocRecord.parts``; for an engine without it, the layout before it, from the record's
fields), and the CPU microseconds of ``DocRecord.from_bytes`` and ``DocRecord.to_bytes`` a
record (this thread's CPU time, the best of each round's repeats).

With ``--base DIR`` the same runs in a second process importing the engine of DIR (``git
archive COMMIT | tar -x -C DIR``, its C kernel built in place); the two take turns round by
round and the medians of the rounds are printed with their ratio.

    python benchmarks/record_bytes.py
    python benchmarks/record_bytes.py --base /tmp/main-tree --rounds 9
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from store_ab import check_engine, engine_process

PARTS = (
    "head",
    "sentence keys",
    "key",
    "story fields",
    "titles",
    "story words",
    "figures",
    "sketch hashes",
    "sketch places",
)


def streams(args: argparse.Namespace) -> dict[str, list[tuple[str, str]]]:
    """(key, text) of each stream."""
    articles = corpus.load_articles(args.data)
    fillers = corpus.FillerTexts(corpus.sentence_pool(articles[len(articles) // 2 :]))
    news = corpus.news_length_docs(articles[: len(articles) // 2])[: args.news]
    pages = [record["text"] for record in corpus.load_jsonl(Path(args.data) / "zh-cwce" / "zh_cwce.jsonl.gz")]
    return {
        "fillers": [(f"filler-{n}", text) for n, text in enumerate(fillers.chunk(0, args.fillers))],
        "news": [(f"https://news.example.com/1998/01/{n:05d}.html", text) for n, text in enumerate(news)],
        "zh-cwce": [(f"https://www.example.com.cn/a/{n:04d}.html", text) for n, text in enumerate(pages)],
    }


def stored_records(texts: list[tuple[str, str]]) -> list:
    """The records a LevelDB store holds after a detector checked ``texts`` into it."""
    from scrapy_neardup import Detector, Recipe, open_store

    with (
        tempfile.TemporaryDirectory() as folder,
        open_store(f"leveldb://{folder}/db", recipe=Recipe(tokenizer="rjieba")) as store,
    ):
        detector = Detector(store)
        for key, text in texts:
            detector.check(key, text)
        return list(store.records())


def parts_before(record) -> dict[str, int]:
    """Bytes by part of a record in the layout before the packed sketch (of its fields)."""
    words = record.story_words if record.sketch.places is not None else None
    source = len(record.source.encode("utf-8")[:255])
    return {
        "head": 34,
        "sentence keys": 8 * len(record.sentence_keys),
        "key": 2 + len(record.key.encode("utf-8", "surrogatepass")),
        "story fields": 17 + source if record.story or record.replaces or record.source else 0,
        "titles": 16 if record.title or record.declared else 0,
        "story words": 0 if words is None else 12 + 7 * len(words.words),
        "figures": 0 if words is None else 4 * len(words.figures),
        "sketch hashes": 4 * len(record.sketch.hashes),
        "sketch places": 0 if words is None else len(record.sketch.hashes),
    }


def bytes_by_part(records: list) -> dict[str, float]:
    totals = dict.fromkeys(PARTS, 0)
    for record in records:
        parts = {name: len(part) for name, part in record.parts()} if hasattr(record, "parts") else None
        for name, size in (parts or parts_before(record)).items():
            totals[name] += size
    return {name: total / len(records) for name, total in totals.items()}


def cost_us(call, items: list, repeats: int) -> float:
    """This thread's CPU µs of ``call`` an item, the best of ``repeats`` passes over ``items``."""
    best = float("inf")
    for _ in range(repeats):
        started = time.thread_time()
        for item in items:
            call(item)
        best = min(best, time.thread_time() - started)
    return best / len(items) * 1e6


def child(args: argparse.Namespace) -> None:
    """Make the streams' records, answer with their bytes by part, then time a round on each
    line of the parent's."""
    from scrapy_neardup.stores.record import DocRecord

    check_engine(args.engine_path)
    made = {name: stored_records(texts) for name, texts in streams(args).items()}
    encoded = {name: [record.to_bytes() for record in records] for name, records in made.items()}
    figures = {
        name: {"records": len(records), "bytes": sum(map(len, encoded[name])) / len(records), **bytes_by_part(records)}
        for name, records in made.items()
    }
    print(json.dumps(figures), flush=True)
    for _ in sys.stdin:
        times = {
            name: {
                "parse": cost_us(DocRecord.from_bytes, encoded[name], args.repeats),
                "write": cost_us(DocRecord.to_bytes, records, args.repeats),
            }
            for name, records in made.items()
        }
        print(json.dumps({"times": times, "load": os.getloadavg()[0]}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--base", type=Path, help="source tree of another engine, measured in turns with this one")
    parser.add_argument("--fillers", type=int, default=3000)
    parser.add_argument("--news", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5, help="passes over a stream's records in a round")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--engine-path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    engines = {"this tree": None} | ({"base": args.base.resolve()} if args.base else {})
    children = {}
    for name, tree in engines.items():
        command = [sys.executable, __file__, "--child", "--data", str(args.data), "--fillers", str(args.fillers)]
        command += ["--news", str(args.news), "--repeats", str(args.repeats)]
        children[name] = engine_process(command, tree)
    made = {name: json.loads(process.stdout.readline()) for name, process in children.items()}
    print("Bytes a record by part (means)\n")
    print("| stream | engine | records | bytes | " + " | ".join(PARTS) + " |")
    print("|---|---|---|---|" + "---|" * len(PARTS))
    for stream in next(iter(made.values())):
        for name, figures in made.items():
            f = figures[stream]
            cells = " | ".join(f"{f[part]:,.1f}" for part in PARTS)
            print(f"| {stream} | {name} | {f['records']:,} | {f['bytes']:,.1f} | {cells} |")
    rounds: dict[str, list[dict]] = {name: [] for name in children}
    loads = []
    for _ in range(args.rounds):
        for name, process in children.items():  # one round of each, in turns
            process.stdin.write("round\n")
            process.stdin.flush()
            answer = json.loads(process.stdout.readline())
            rounds[name].append(answer["times"])
            loads.append(answer["load"])
    for process in children.values():
        process.stdin.close()
        process.wait()
    print(f"\nCPU µs a record, medians of {args.rounds} rounds (load {min(loads):.1f}-{max(loads):.1f})\n")
    ratio = "base" in children
    print(
        "| stream | engine | read (from_bytes) | write (to_bytes) |"
        + (" read / base | write / base |" if ratio else "")
    )
    print("|---|---|---|---|" + ("---|---|" if ratio else ""))
    medians = {
        name: {
            stream: {kind: statistics.median(r[stream][kind] for r in taken) for kind in ("parse", "write")}
            for stream in taken[0]
        }
        for name, taken in rounds.items()
    }
    for stream in medians["this tree"]:
        for name, figures in medians.items():
            f = figures[stream]
            row = f"| {stream} | {name} | {f['parse']:.2f} | {f['write']:.2f} |"
            if ratio:
                base = medians["base"][stream]
                row += f" {f['parse'] / base['parse']:.2f} | {f['write'] / base['write']:.2f} |"
            print(row)


if __name__ == "__main__":
    main()
