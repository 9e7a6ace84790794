"""``neardup``: the detector on JSON lines, outside Scrapy.

``neardup dedup`` reads records in order and writes every one of them back, with
``duplicate_of`` and ``similar_id`` added; nothing is ever lost: a line that is not JSON, or
has no usable text, is reported with its line number and written out unchanged.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from dataclasses import dataclass
from typing import IO, Callable, Iterator, Sequence

from . import __version__
from .batching import ahead, chunks, overlapped
from .detector import DUPLICATE, SHORT, Detector, Thresholds, Verdict
from .fingerprint import Fingerprint, Fingerprinter, Recipe
from .stores import StoreError, open_store, redact


@dataclass
class Summary:
    records: int = 0
    unique: int = 0
    duplicates: int = 0
    skipped: int = 0  # not JSON, not an object, no usable text, or too short to judge

    def line(self) -> str:
        return (
            f"{self.records} records: {self.unique} unique, {self.duplicates} duplicates, "
            f"{self.skipped} skipped"
        )


def _open_input(path: str) -> IO[str]:
    if path == "-":
        return sys.stdin
    return open(path, encoding="utf-8", errors="surrogateescape", newline="")


def _open_output(path: str) -> IO[str]:
    if path == "-":
        return sys.stdout
    return open(path, "w", encoding="utf-8", errors="surrogateescape", newline="")


def _warn(message: str) -> None:
    print(f"neardup: {message}", file=sys.stderr)


def dedup(args: argparse.Namespace) -> int:
    recipe = Recipe(tokenizer=args.tokenizer, nshash_n=args.nshash_n, simhash_k=args.distance)
    # A Redis namespace fixes its TTL in its layout (its buckets expire by window).
    options = {"ttl": args.ttl} if args.ttl and args.store.startswith(("redis", "rediss", "unix")) else {}
    try:
        store = open_store(args.store, args.namespace, recipe, **options, **_redis_options(args))
    except StoreError as exc:
        _warn(str(exc))
        return 2
    detector = Detector(
        store,
        Thresholds(containment=args.threshold, min_chars=args.min_chars),
        ttl=args.ttl or None,
    )
    summary = Summary()
    shown = 0
    with contextlib.ExitStack() as stack:
        source = _open_input(args.input)
        target = _open_output(args.output)
        if source is not sys.stdin:
            stack.enter_context(source)
        if target is not sys.stdout:
            stack.enter_context(target)
        stack.callback(store.close)
        progress = _progress(args)
        stack.callback(progress.close)
        fingerprint = _fingerprinting(args, detector, stack)

        def prepared(batch: list[tuple[int, str]]) -> list[tuple[_Parsed, Fingerprint | str | None]]:
            parsed = [_parse(line, number, args) for number, line in batch]
            prints = iter(fingerprint([p.text for p in parsed if p.text is not None]))
            return [(item, next(prints) if item.text else None) for item in parsed]

        # Batches of lines, each handed to the store before the next is read and fingerprinted
        # and written after: a shared store (Redis) checks a batch in one round trip meanwhile.
        # With --workers, a thread waits for the workers' fingerprints of the next batch. The
        # store knows a batch before its lines are written, so a killed run loses nothing.
        batches = map(prepared, chunks(enumerate(source, start=1), 64))
        if args.workers:
            batches = ahead(batches)
        done = 0  # lines written (or dropped) so far
        try:
            for item, (out, problem) in overlapped(batches, lambda batch: _decide(detector, batch, args, summary)):
                done = item.number
                summary.records += 1
                progress.update(1)
                if problem:
                    summary.skipped += 1
                    if shown < args.max_warnings:
                        _warn(f"{args.input}:{item.number}: {problem}; passed through unchanged")
                        shown += 1
                if out is not None:
                    target.write(out if out.endswith("\n") else out + "\n")
                    if args.flush:
                        target.flush()
        except StoreError as exc:
            _warn(f"{args.input}:{done + 1}: store failed ({exc}); stopped here: this line and the "
                  "ones after it were not written")
            print(summary.line(), file=sys.stderr)
            return 3
        progress.close()
    if shown < summary.skipped:
        _warn(f"{summary.skipped - shown} more skipped lines not shown")
    print(summary.line(), file=sys.stderr)
    return 0


@dataclass
class _Parsed:
    number: int
    line: str
    record: dict | None = None
    text: str | None = None  # set when the record has text to judge
    key: str = ""
    problem: str | None = None


def _parse(line: str, number: int, args: argparse.Namespace) -> _Parsed:
    item = _Parsed(number, line)
    if not line.strip():
        item.problem = "blank line"
        return item
    try:
        record = json.loads(line)
    except ValueError as exc:
        item.problem = f"not valid JSON ({exc.msg} at column {exc.colno})"
        return item
    if not isinstance(record, dict):
        item.problem = "not a JSON object"
        return item
    text = record.get(args.text_field)
    if not isinstance(text, str) or not text.strip():
        item.problem = f"no usable text in field {args.text_field!r}"
        return item
    key = record.get(args.key_field)
    item.record, item.text = record, text
    item.key = f"{args.input}:{number}" if key is None else str(key)
    return item


def _fingerprint_or_error(fingerprinter: Fingerprinter, text: str) -> Fingerprint | str:
    try:
        return fingerprinter.fingerprint(text)
    except Exception as exc:  # a text the engine cannot handle must not stop the run
        return f"could not fingerprint ({type(exc).__name__}: {exc})"


_WORKER: Fingerprinter | None = None


def _start_worker(recipe: Recipe) -> None:
    global _WORKER
    _WORKER = Fingerprinter(recipe)


def _work(text: str) -> Fingerprint | str:
    assert _WORKER is not None
    return _fingerprint_or_error(_WORKER, text)


def _fingerprinting(args: argparse.Namespace, detector: Detector, stack: contextlib.ExitStack):
    """texts -> fingerprints (or error strings), in order; in worker processes with --workers."""
    if not args.workers:
        return lambda texts: [_fingerprint_or_error(detector.fingerprinter, t) for t in texts]
    import concurrent.futures
    import multiprocessing

    pool = concurrent.futures.ProcessPoolExecutor(
        args.workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(detector.recipe,),
    )
    stack.callback(pool.shutdown)
    return lambda texts: pool.map(_work, texts, chunksize=16)


def _decide(
    detector: Detector,
    batch: list[tuple[_Parsed, Fingerprint | str | None]],
    args: argparse.Namespace,
    summary: Summary,
) -> Callable[[], list[tuple[_Parsed, tuple[str | None, str | None]]]]:
    """Hand the batch to the store; the function returned gives, for each line, the line to
    write (None: dropped) and, if passed through untouched, why."""
    judged = [(item.key, fp) for item, fp in batch if not item.problem and isinstance(fp, Fingerprint)]
    finish = detector.start_many(judged)

    def outcomes() -> list[tuple[_Parsed, tuple[str | None, str | None]]]:
        verdicts = iter(finish())
        out: list[tuple[_Parsed, tuple[str | None, str | None]]] = []
        for item, fingerprint in batch:
            if item.problem:
                out.append((item, (item.line, item.problem)))
            elif not isinstance(fingerprint, Fingerprint):
                out.append((item, (item.line, fingerprint or "no fingerprint")))
            else:
                out.append((item, _written(item, next(verdicts), args, summary)))
        return out

    return outcomes


def _written(item: _Parsed, verdict: Verdict, args: argparse.Namespace, summary: Summary) -> tuple[str | None, str | None]:
    if verdict.status == SHORT:
        return item.line, f"text too short to judge ({verdict.chars} characters)"
    if verdict.status == DUPLICATE:
        summary.duplicates += 1
        if args.drop:
            return None, None
    else:
        summary.unique += 1
    record = item.record
    assert record is not None
    record[args.duplicate_of_field] = verdict.duplicate_of
    record[args.similar_id_field] = verdict.similar_id
    if args.explain and verdict.status == DUPLICATE:
        record["neardup"] = {
            "method": verdict.method,
            "jaccard": verdict.jaccard,
            "containment": verdict.containment,
            "distance": verdict.distance,
        }
    return json.dumps(record, ensure_ascii=False) + "\n", None


class _NoProgress:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(args: argparse.Namespace):
    if args.no_progress or not sys.stderr.isatty():
        return _NoProgress()
    from tqdm import tqdm

    return tqdm(unit=" records", file=sys.stderr, mininterval=0.5)


def purge(args: argparse.Namespace) -> int:
    try:
        store = open_store(args.store, args.namespace, Recipe(tokenizer=args.tokenizer), **_redis_options(args))
    except StoreError as exc:
        _warn(str(exc))
        return 2
    import time

    with store:
        removed = store.purge(time.time() - args.older_than)
    print(f"removed {removed} documents older than {args.older_than:g} s", file=sys.stderr)
    return 0


def info(args: argparse.Namespace) -> int:
    recipe = Recipe(tokenizer=args.tokenizer)
    try:
        store = open_store(args.store, args.namespace, recipe, **_redis_options(args))
    except StoreError as exc:
        _warn(str(exc))
        return 2
    with store:
        print(json.dumps(
            {
                "store": redact(args.store),
                "namespace": args.namespace,
                "format": store.format_version,
                "recipe": store.recipe.as_dict(),
                "documents": store.count(),
            },
            indent=2,
        ))
    return 0


def _redis_options(args: argparse.Namespace) -> dict:
    redis = args.store.startswith(("redis", "rediss", "unix"))
    return {"allow_eviction": True} if redis and args.allow_eviction else {}


def _store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", default="memory://",
        help="store URI: memory:// (default), leveldb:///path/to/dir, redis://host:port/db",
    )
    parser.add_argument("--namespace", default="default", help="key space inside the store")
    parser.add_argument(
        "--allow-eviction", action="store_true",
        help="open a Redis store whose maxmemory-policy may evict keys (refused otherwise)",
    )
    parser.add_argument(
        "--tokenizer", default="auto", choices=["auto", "jieba", "rjieba"],
        help="auto: rjieba when installed, else jieba",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neardup", description="Near-duplicate news detection.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("dedup", help="mark or drop reprints in a JSON lines file")
    run.add_argument("input", help="JSON lines file, - for stdin")
    run.add_argument("-o", "--output", default="-", help="output JSON lines file, - for stdout")
    run.add_argument("--text-field", default="text")
    run.add_argument("--key-field", default="id", help="record key; missing: input:line")
    run.add_argument("--drop", action="store_true", help="write first-seen records only")
    run.add_argument("--duplicate-of-field", default="duplicate_of")
    run.add_argument("--similar-id-field", default="similar_id")
    run.add_argument("--explain", action="store_true", help="add how each duplicate matched")
    run.add_argument("--threshold", type=float, default=Thresholds().containment,
                     help="containment needed to call a candidate a duplicate")
    run.add_argument("--min-chars", type=int, default=Thresholds().min_chars,
                     help="texts with fewer content characters are passed, not judged")
    run.add_argument("--nshash-n", type=int, default=Recipe().nshash_n)
    run.add_argument("--distance", type=int, default=Recipe().simhash_k,
                     help="SimHash Hamming distance")
    run.add_argument("--ttl", type=float, default=0, help="time window in seconds (0: none)")
    run.add_argument("--workers", type=int, default=0,
                     help="processes that fingerprint in parallel (0: in this process)")
    run.add_argument("--no-progress", action="store_true")
    run.add_argument("--flush", action=argparse.BooleanOptionalAction, default=True,
                     help="flush the output after each record (default on)")
    run.add_argument("--max-warnings", type=int, default=20)
    _store_options(run)
    run.set_defaults(func=dedup)

    old = commands.add_parser("purge", help="remove documents older than a time window")
    old.add_argument("--older-than", type=float, required=True, help="seconds")
    _store_options(old)
    old.set_defaults(func=purge)

    show = commands.add_parser("info", help="show a store's format, recipe and size")
    _store_options(show)
    show.set_defaults(func=info)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, StoreError) as exc:
        _warn(str(exc))
        return 2
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
