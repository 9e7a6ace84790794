"""``neardup``: the detector on JSON lines, outside Scrapy.

``neardup dedup`` reads records in order and writes every one of them back, with
``duplicate_of`` and ``similar_id`` added; nothing is ever lost: a line that is not JSON, or
has no usable text, is reported with its line number and written out unchanged.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import html
import io
import json
import os
import signal
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, Sequence

from . import __version__
from .batching import ahead, chunks, overlapped
from .detector import DUPLICATE, METHODS, MIN_SIMILARITY, REVISIT, REVISITS, SHORT, Detector, Thresholds, Verdict, methods_from
from .fingerprint import Fingerprint, Fingerprinter, Recipe
from .explain import Explanation, explain
from .extract import ExtractionError, decode_html, html_to_text, looks_binary
from .marking import MAX_ALIGN_CHARS, marked_for_terminal
from .passages import passages_of
from .prefer import PREFER_CHOICES, policy_from
from .report import FirstCopies, Pair, Report, page, pair_section, write_file
from .record import PENDING, DocRecord, clip_key, content_key
from .stores import Store, StoreError, StoreFormatError, open_store, read_meta, redact


@dataclass
class Summary:
    records: int = 0
    unique: int = 0
    duplicates: int = 0
    skipped: int = 0  # not JSON, not an object, no usable text, or too short to judge
    replaced: int = 0  # of the unique, those that replaced a stored copy (--prefer)
    updated: int = 0  # of the unique, new texts under a stored key (they replaced its document)
    revisits: int = 0  # keys seen again with the text stored under them

    def line(self) -> str:
        replacing = f", {self.replaced} replacing a stored copy" if self.replaced else ""
        updated = f", {self.updated} updated" if self.updated else ""
        unique = f" ({(replacing + updated)[2:]})" if replacing or updated else ""
        revisits = f", {self.revisits} revisits" if self.revisits else ""
        return (
            f"{self.records} records: {self.unique} unique{unique}{revisits}, {self.duplicates} duplicates, "
            f"{self.skipped} skipped"
        )


@dataclass
class QuerySummary(Summary):
    similar: int = 0  # with similar entries but none marked duplicate

    def line(self) -> str:
        return (
            f"{self.records} records: {self.duplicates} with a duplicate stored, {self.similar} "
            f"with similar entries only, {self.unique} with none, {self.skipped} skipped"
        )


class CommandError(Exception):
    """A problem with the command's files or options, told in one line (exit code 2)."""


def _open_input(path: str) -> BinaryIO:
    """Lines are read as bytes and split at newlines only, so every line can be written back
    exactly as it came, whatever its encoding or stray carriage returns."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CommandError(f"cannot read input {path}: {exc.strerror or exc}") from None


def _same_file(input_path: str, output_path: str) -> bool:
    """Both name one regular file (a terminal or pipe may well be stdin and stdout at once)."""
    try:
        out = os.fstat(sys.stdout.fileno()) if output_path == "-" else os.stat(output_path)
        inp = os.fstat(sys.stdin.fileno()) if input_path == "-" else os.stat(input_path)
    except (OSError, ValueError, io.UnsupportedOperation):  # no such file, or a captured stream
        return False
    return stat.S_ISREG(inp.st_mode) and (inp.st_dev, inp.st_ino) == (out.st_dev, out.st_ino)


class _Output:
    """The output file, written under a temporary name in its folder and renamed at the end.

    Writing the input's own file (``-o`` equal to the input, also through a link or stdin) is
    refused: opening it for writing would erase the records still to be read. An interrupted
    run leaves the file that was there before untouched.
    """

    def __init__(self, path: str, input_path: str):
        self.path = path
        self.temp: str | None = None
        if _same_file(input_path, path):
            shown = "stdout" if path == "-" else path
            raise CommandError(f"output {shown} is the input file; write the output to another file")
        if path == "-":
            self.stream: BinaryIO = sys.stdout.buffer
            return
        target = os.path.realpath(path)
        if os.path.isdir(target):
            raise CommandError(f"cannot write output {path}: it is a directory")
        if os.path.exists(target) and not os.path.isfile(target):
            # A device or pipe (/dev/null) is written as it is: a rename would replace it.
            try:
                self.stream = open(target, "wb")
            except OSError as exc:
                raise CommandError(f"cannot write output {path}: {exc.strerror or exc}") from None
            return
        folder, name = os.path.split(target)
        try:
            handle, self.temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".partial")
        except OSError as exc:
            raise CommandError(f"cannot write output {path}: {exc.strerror or exc}") from None
        try:
            mode = os.stat(target).st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(self.temp, mode)
        self.target = target
        self.stream = os.fdopen(handle, "wb")

    def finish(self) -> None:
        """Put the output in place (what was written so far, when a store failed mid-run)."""
        if self.temp is None:
            self.stream.flush()
            if self.stream is not sys.stdout.buffer:
                self.stream.close()
            return
        self.stream.close()
        os.replace(self.temp, self.target)
        self.temp = None

    def discard(self) -> None:
        if self.temp is not None:
            self.stream.close()
            with contextlib.suppress(OSError):
                os.unlink(self.temp)
            self.temp = None


def _warn(message: str) -> None:
    print(f"neardup: {message}", file=sys.stderr)


def _check_related_field(args: argparse.Namespace, *written: str) -> None:
    if args.related and (not args.related_field or args.related_field in {args.text_field, *written}):
        raise CommandError(
            f"--related-field must name a field of its own, not {args.related_field!r} "
            "(the text field, or one the other --*-field options write)"
        )


def dedup(args: argparse.Namespace) -> int:
    _check_related_field(args, args.duplicate_of_field, args.similar_id_field)
    taken = (args.text_field, args.key_field, args.duplicate_of_field, args.similar_id_field)
    taken += (args.related_field,) if args.related else ()
    if args.replaces_field in taken:
        raise CommandError(
            f"--replaces-field must name a field of its own, not {args.replaces_field!r} "
            "(the text or key field, or one the other --*-field options write)"
        )
    try:
        args.policy = policy_from(args.prefer, [s for s in args.prefer_sources.split(",") if s.strip()])
    except ValueError as exc:
        raise CommandError(f"--prefer: {exc}") from None
    recipe = Recipe(tokenizer=args.tokenizer, nshash_n=args.nshash_n, simhash_k=args.distance)
    thresholds = Thresholds(containment=args.threshold, min_chars=args.min_chars)
    if not args.report:
        return _run_lines(args, recipe, thresholds, _decide, Summary(), create=True)
    review = _Review(Report(args.report), FirstCopies())
    try:
        if os.path.isdir(args.report) or not os.path.isdir(os.path.dirname(os.path.abspath(args.report))):
            raise CommandError(f"cannot write the report {args.report}: not a file in an existing folder")
        decide = functools.partial(_decide, review=review)
        code = _run_lines(args, recipe, thresholds, decide, Summary(), create=True)
        if code in (0, 3):  # a run stopped by its store reports what it did
            try:
                pages = review.report.write()
            except OSError as exc:
                raise CommandError(f"cannot write the report {args.report}: {exc.strerror or exc}") from None
            shown = pages[0] if len(pages) == 1 else f"{pages[0]} and {len(pages) - 1} more pages"
            print(f"review page: {shown}", file=sys.stderr)
        return code
    finally:
        review.report.close()


@dataclass
class _Review:
    """What ``dedup --report`` gathers: the report, and the first copies' texts it shows."""

    report: Report
    copies: FirstCopies

    def note(self, item: "_Parsed", verdict: Verdict) -> None:
        if verdict.status == DUPLICATE:
            self.report.add(Pair(
                item.key, item.text or "", verdict.duplicate_of or "", self.copies.text(verdict.similar_id),
                verdict.method, verdict.containment, verdict.jaccard, verdict.distance,
            ))
            return
        self.report.count(verdict.status if verdict.status != SHORT else "not judged")
        if verdict.status != SHORT and verdict.doc_id == verdict.similar_id:
            self.copies.remember(verdict.similar_id, item.text or "")


def query(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise CommandError(f"-k must be at least 1, got {args.k}")
    if not 0.0 <= args.min_similarity <= 1.0:
        raise CommandError(f"--min-similarity must be between 0 and 1, got {args.min_similarity}")
    _check_related_field(args, args.similar_field)
    recipe = Recipe(tokenizer=args.tokenizer, nshash_n=args.nshash_n, simhash_k=args.distance)
    thresholds = Thresholds(containment=args.threshold, min_chars=args.min_chars)
    return _run_lines(args, recipe, thresholds, _answer, QuerySummary(), create=False)


# Parsed lines with their fingerprints (or why there is none); each line's output (None:
# dropped) and, when it was passed through untouched, why.
Batch = list[tuple["_Parsed", "Fingerprint | str | None"]]
Outcomes = list[tuple["_Parsed", tuple[bytes | None, str | None]]]
# Hands a batch to the detector; the function returned gives the batch's outcomes.
Decide = Callable[[Detector, Batch, argparse.Namespace, Summary], Callable[[], Outcomes]]


def _run_lines(
    args: argparse.Namespace, recipe: Recipe, thresholds: Thresholds, decide: Decide, summary: Summary, create: bool
) -> int:
    """Read JSON lines, fingerprint them and write each line's outcome, in input order.

    Shared by dedup and query: lines are bytes in and out, and a line that cannot be judged
    is written back unchanged with a warning naming it.
    """
    shown = 0
    with contextlib.ExitStack() as stack:
        # The files first: a wrong path must not leave a new store behind.
        source = _open_input(args.input)
        if source is not sys.stdin.buffer:
            stack.enter_context(source)
        output = _Output(args.output, args.input)
        stack.callback(output.discard)
        target = output.stream
        try:
            store = open_store(
                args.store, args.namespace, recipe, create=create, ttl=args.ttl or None,
                redis_allow_eviction=args.allow_eviction,
            )
        except StoreError as exc:
            _warn(str(exc))
            return 2
        stack.callback(store.close)
        detector = Detector(store, thresholds, ttl=args.ttl or None, methods=args.methods, prefer=getattr(args, "policy", None))
        progress = _Progress(args, source)
        stack.callback(progress.close)
        fingerprint = _fingerprinting(args, detector, stack)

        def prepared(batch: list[tuple[int, bytes]]) -> list[tuple[_Parsed, Fingerprint | str | None]]:
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
            for item, (out, problem) in overlapped(batches, lambda batch: decide(detector, batch, args, summary)):
                done = item.number
                summary.records += 1
                progress.line(item.line)
                if problem:
                    summary.skipped += 1
                    if shown < args.max_warnings:
                        _warn(f"{args.input}:{item.number}: {problem}; passed through unchanged")
                        shown += 1
                if out is not None:
                    target.write(out if out.endswith(b"\n") else out + b"\n")
                    if args.flush:
                        target.flush()
        except StoreError as exc:
            _warn(f"{args.input}:{done + 1}: store failed ({exc}); stopped here: this line and the "
                  "ones after it were not written")
            output.finish()
            print(summary.line(), file=sys.stderr)
            return 3
        progress.close()
        output.finish()
    if shown < summary.skipped:
        _warn(f"{summary.skipped - shown} more skipped lines not shown")
    print(summary.line(), file=sys.stderr)
    return 0


@dataclass
class _Parsed:
    number: int
    line: bytes  # as read, written back unchanged when the record is not judged
    record: dict | None = None
    text: str | None = None  # set when the record has text to judge
    key: str = ""
    problem: str | None = None


def _parse(line: bytes, number: int, args: argparse.Namespace) -> _Parsed:
    item = _Parsed(number, line)
    # Bytes that are not UTF-8 stay in the text as lone surrogates and go back out unchanged.
    decoded = line.decode("utf-8", "surrogateescape")
    if number == 1:
        decoded = decoded.removeprefix("\ufeff")
    if not decoded.strip():
        item.problem = "blank line"
        return item
    try:
        record = json.loads(decoded)
    except json.JSONDecodeError as exc:
        item.problem = f"not valid JSON ({exc.msg} at column {exc.colno})"
        return item
    except RecursionError:
        item.problem = "not valid JSON here (nested too deeply to read)"
        return item
    except ValueError as exc:  # a number with more digits than Python converts
        item.problem = f"not valid JSON here ({exc})"
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
    item.key = content_key(text) if key is None or key == "" else str(key)
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


def _problem(item: _Parsed, fingerprint: Fingerprint | str | None) -> str | None:
    """Why a line is passed through unjudged (not a record with text, or not fingerprinted)."""
    if item.problem:
        return item.problem
    if not isinstance(fingerprint, Fingerprint):
        return fingerprint or "no fingerprint"
    return None


def _decide(
    detector: Detector, batch: Batch, args: argparse.Namespace, summary: Summary, review: _Review | None = None
) -> Callable[[], Outcomes]:
    """Hand the batch to the store; the function returned gives, for each line, the line to
    write (None: dropped) and, if passed through untouched, why."""
    judged = [(item, fp) for item, fp in batch if not item.problem and isinstance(fp, Fingerprint)]
    passages = [passages_of(item.text or "") for item, _ in judged] if args.related else None
    sources = [_source(item, args) for item, _ in judged]
    texts = [item.text or "" for item, _ in judged] if args.keep_text else None
    finish = detector.start_many([(item.key, fp) for item, fp in judged], passages, sources=sources, texts=texts)
    if review is not None and review.copies.read is None:
        review.copies.read = detector.store.texts

    def outcomes() -> Outcomes:
        verdicts = iter(finish())
        out: Outcomes = []
        for item, fingerprint in batch:
            problem = _problem(item, fingerprint)
            if problem:
                if review is not None:
                    review.report.count("not judged")
                out.append((item, (item.line, problem)))
            else:
                verdict = next(verdicts)
                if review is not None:
                    review.note(item, verdict)
                out.append((item, _written(item, verdict, args, summary)))
        return out

    return outcomes


def _source(item: _Parsed, args: argparse.Namespace) -> str:
    """The record's site for --prefer source: its --source-field as text, else "" (the key's host)."""
    value = item.record.get(args.source_field) if args.source_field and item.record else None
    return value.strip() if isinstance(value, str) else ""


def _written(item: _Parsed, verdict: Verdict, args: argparse.Namespace, summary: Summary) -> tuple[bytes | None, str | None]:
    if verdict.status == SHORT:
        return item.line, f"text too short to judge ({verdict.chars} characters)"
    if verdict.status == DUPLICATE:
        summary.duplicates += 1
        if args.drop:
            return None, None
    elif verdict.status == REVISIT:
        summary.revisits += 1
        if args.revisit == "drop":
            return None, None
    else:
        summary.unique += 1
        summary.updated += verdict.updated
    record = item.record
    assert record is not None
    record[args.duplicate_of_field] = verdict.duplicate_of
    record[args.similar_id_field] = verdict.similar_id
    if verdict.replaces is not None:
        summary.replaced += 1
        record[args.replaces_field] = verdict.replaces
    if args.explain and verdict.status == DUPLICATE:
        record["neardup"] = {
            "method": verdict.method,
            "jaccard": verdict.jaccard,
            "containment": verdict.containment,
            "distance": verdict.distance,
        }
    if verdict.related is not None:
        record[args.related_field] = verdict.related
    line, note = _encode(record)
    if note:
        _warn(f"{args.input}:{item.number}: {note}")
    return line, None


def _answer(detector: Detector, batch: Batch, args: argparse.Namespace, summary: Summary) -> Callable[[], Outcomes]:
    """Query's counterpart of :func:`_decide`: each record with its similar stored entries."""
    judged = [(item, fp) for item, fp in batch if not item.problem and isinstance(fp, Fingerprint)]
    judged = [(item, fp) for item, fp in judged if fp.chars >= detector.thresholds.min_chars]
    answers = detector.query_many(
        [fp for _, fp in judged], args.k, args.min_similarity, [item.key for item, _ in judged]
    )
    found = {id(item): answer for (item, _), answer in zip(judged, answers)}
    related = {}
    if args.related:
        own_story = [{s.similar_id for s in answer if s.duplicate} for answer in answers]
        passages = [passages_of(item.text or "") for item, _ in judged]
        lists = detector.related(passages, own_story, [item.key for item, _ in judged])
        related = {id(item): listed for (item, _), listed in zip(judged, lists)}

    def outcomes() -> Outcomes:
        out: Outcomes = []
        for item, fingerprint in batch:
            problem = _problem(item, fingerprint)
            if problem:
                out.append((item, (item.line, problem)))
            elif id(item) not in found:
                assert isinstance(fingerprint, Fingerprint)
                out.append((item, (item.line, f"text too short to judge ({fingerprint.chars} characters)")))
            else:
                similar = found[id(item)]
                if any(s.duplicate for s in similar):
                    summary.duplicates += 1
                elif similar:
                    summary.similar += 1  # type: ignore[attr-defined]
                else:
                    summary.unique += 1
                record = item.record
                assert record is not None
                record[args.similar_field] = [s.as_dict() for s in similar]
                if args.related:
                    record[args.related_field] = related[id(item)]
                line, note = _encode(record)
                if note:
                    _warn(f"{args.input}:{item.number}: {note}")
                out.append((item, (line, None)))
        return out

    return outcomes


def _encode(record: dict) -> tuple[bytes, str | None]:
    """The record as a JSON line; undecodable input bytes go back out as they came. A lone
    surrogate that came as a JSON escape cannot be written as UTF-8: such a record is written
    with \\u escapes (the same JSON value), and said so."""
    line = json.dumps(record, ensure_ascii=False)
    try:
        return line.encode("utf-8", "surrogateescape") + b"\n", None
    except UnicodeEncodeError:
        escaped = json.dumps(record, ensure_ascii=True).encode("ascii") + b"\n"
        return escaped, "holds a lone surrogate; written with \\u escapes"


class _Progress:
    """A progress bar on a terminal: by bytes, with a total and an ETA, when the input is a
    regular file (its size is known); by records otherwise."""

    def __init__(self, args: argparse.Namespace, source: BinaryIO):
        self.bar = None
        if args.no_progress or not sys.stderr.isatty():
            return
        from tqdm import tqdm

        try:
            status = os.fstat(source.fileno())
            size = status.st_size if stat.S_ISREG(status.st_mode) else None
        except (OSError, ValueError):
            size = None
        self.by_bytes = size is not None
        if self.by_bytes:
            self.bar = tqdm(total=size, unit="B", unit_scale=True, file=sys.stderr, mininterval=0.5)
        else:
            self.bar = tqdm(unit=" records", file=sys.stderr, mininterval=0.5)

    def line(self, data: bytes) -> None:
        if self.bar is not None:
            self.bar.update(len(data) if self.by_bytes else 1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def purge(args: argparse.Namespace) -> int:
    try:
        store = open_store(args.store, args.namespace, Recipe(tokenizer=args.tokenizer), create=False, redis_allow_eviction=args.allow_eviction)
    except StoreError as exc:
        _warn(str(exc))
        return 2

    with store:
        removed = store.purge(time.time() - args.older_than)
    print(f"removed {removed} documents older than {args.older_than:g} s", file=sys.stderr)
    return 0


def _open_as_stored(args: argparse.Namespace) -> tuple[Store | None, dict, str | None]:
    """A store opened with the recipe it was written with, whatever this version's is: the
    commands that only look at a store show a store of another recipe instead of refusing it.
    Returns the store (None when it cannot be opened), its stored meta and why not."""
    options = {"redis_allow_eviction": args.allow_eviction}
    try:  # the usual case, and every other refusal (no store, an evicting server) as it is
        store = open_store(args.store, args.namespace, Recipe(tokenizer=args.tokenizer), create=False, **options)
        return store, {"format": store.format_version, "recipe": store.recipe.as_dict()}, None
    except StoreFormatError as exc:
        refused = str(exc)
    meta = read_meta(args.store, args.namespace, **options) or {}
    try:
        recipe = Recipe(tokenizer=args.tokenizer, **meta.get("recipe", {}))
    except (TypeError, ValueError) as exc:  # fields of another scrapy-neardup version
        return None, meta, f"{refused}; its recipe is not one this version can read ({exc})"
    try:
        return open_store(args.store, args.namespace, recipe, create=False, **options), meta, None
    except StoreFormatError as exc:
        return None, meta, str(exc)


def info(args: argparse.Namespace) -> int:
    store, meta, problem = _open_as_stored(args)
    configured = Recipe(tokenizer=args.tokenizer).resolved().as_dict()
    shown = {
        "store": redact(args.store),
        "namespace": args.namespace,
        "format": meta.get("format"),
        "recipe": meta.get("recipe"),
        "documents": None,
    }
    stored = meta.get("recipe") or {}
    differs = {
        name: {"stored": stored.get(name), "this version": configured.get(name)}
        for name in sorted(set(stored) | set(configured))
        if stored.get(name) != configured.get(name)
    }
    if differs:
        shown["differs"] = differs  # checking against it with these defaults would be refused
    if store is None:
        shown["problem"] = problem
    else:
        with store:
            shown["documents"] = store.count()
    print(json.dumps(shown, indent=2, ensure_ascii=False))
    return 0


def _record_fields(record: DocRecord) -> dict:
    return {
        "key": record.key,
        "similar_id": record.story_id,
        "time": record.time,
        "length": record.chars,
        "pending": record.state == PENDING,
    }


def _readable_store(args: argparse.Namespace) -> Store:
    store, _, problem = _open_as_stored(args)
    if store is None:
        raise StoreFormatError(f"cannot read {redact(args.store)}: {problem}")
    return store


def export(args: argparse.Namespace) -> int:
    """Every record as a JSON line, oldest first, with its text when the store kept it."""
    with contextlib.ExitStack() as stack:
        output = _Output(args.output, "")
        stack.callback(output.discard)
        store = stack.enter_context(_readable_store(args))
        written = 0
        for records in chunks(store.records(), 500):
            texts = store.texts([record.doc_id for record in records])
            for record in records:
                fields = _record_fields(record)
                if record.doc_id in texts:  # kept (NEARDUP_KEEP_TEXT, dedup --keep-text)
                    fields["text"] = texts[record.doc_id]
                output.stream.write(json.dumps(fields, ensure_ascii=False).encode("utf-8") + b"\n")
                written += 1
        output.finish()
    print(f"{written} records", file=sys.stderr)
    return 0


def list_records(args: argparse.Namespace) -> int:
    """One line a record, oldest first: id, time (UTC), content characters, key."""
    with _readable_store(args) as store:
        for record in store.records():
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(record.time))
            pending = " pending" if record.state == PENDING else ""
            print(f"{record.doc_id}\t{when}\t{record.chars}\t{record.key}{pending}")
    return 0


def lookup(args: argparse.Namespace) -> int:
    """The records stored under KEY, as JSON lines; exit code 1 when there is none."""
    key = clip_key(args.key)
    found = 0
    with _readable_store(args) as store:
        for record in store.stored_under(key):
            print(json.dumps(_record_fields(record), ensure_ascii=False))
            found += 1
    if not found:
        _warn(f"no record with key {args.key!r} in {redact(args.store)} (namespace {args.namespace!r})")
    return 0 if found else 1


def _read_document(path: str, form: str) -> str:
    """The text of a file for ``explain``: HTML goes through the extraction dedup uses."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    if looks_binary(data):
        raise CommandError(f"{path} is not text ({len(data)} bytes of binary content)")
    if form == "auto":
        start = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        form = "html" if start == b"<" or path.lower().endswith((".htm", ".html")) else "text"
    try:
        text = html_to_text(data) if form == "html" else decode_html(data).removeprefix("\ufeff")
    except ExtractionError as exc:
        raise CommandError(f"cannot read {path} as HTML: {exc}") from None
    if not text.strip():
        raise CommandError(f"{path} has no text" + (" in its article body" if form == "html" else ""))
    return text


def explain_pair(args: argparse.Namespace) -> int:
    """Would dedup call B a duplicate of A, and why: the signals and the shared passages."""
    first, second = _read_document(args.a, args.format), _read_document(args.b, args.format)
    recipe = Recipe(tokenizer=args.tokenizer, nshash_n=args.nshash_n, simhash_k=args.distance)
    thresholds = Thresholds(containment=args.threshold, min_chars=args.min_chars)
    with contextlib.ExitStack() as stack:
        store = None
        if args.store:
            try:
                store = stack.enter_context(open_store(
                    args.store, args.namespace, recipe, create=False, redis_allow_eviction=args.allow_eviction,
                ))
            except StoreError as exc:
                _warn(str(exc))
                return 2
        found = explain(first, second, recipe, thresholds, store)
    colour = args.color == "always" or (
        args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    )
    print(_explained(found, args, thresholds, colour, first, second))
    if args.html:
        pair = Pair(args.b, second, args.a, first, found.verdict.method, round(found.containment, 4),
                    round(found.jaccard, 4), found.distance)
        body = f'<p class="signals">{html.escape(_verdict_line(found, thresholds))}</p>\n'
        document = page(f"neardup explain: {args.a} / {args.b}", body + pair_section(pair, found.alignment))
        try:
            write_file(args.html, document)
        except OSError as exc:
            raise CommandError(f"cannot write {args.html}: {exc.strerror or exc}") from None
    return 0


def _verdict_line(found: Explanation, thresholds: Thresholds) -> str:
    verdict = found.verdict
    if verdict.status == DUPLICATE:
        return f"duplicate: dedup would call B a reprint of A (found by {verdict.method})"
    if verdict.status == SHORT:
        return f"not judged: B has {verdict.chars} content characters, fewer than {thresholds.min_chars}"
    if found.a_chars < thresholds.min_chars:
        return f"not a duplicate: A has {found.a_chars} content characters, too few to be stored"
    return "not a duplicate: dedup would keep B as a story of its own"


def _explained(found: Explanation, args: argparse.Namespace, thresholds: Thresholds, colour: bool, a: str, b: str) -> str:
    short = min(found.a_chars, found.b_chars) < thresholds.short_chars
    needed_c = thresholds.short_containment if short else thresholds.containment
    needed_j = thresholds.short_jaccard if short else thresholds.jaccard
    alignment = found.alignment
    lines = [
        f"verdict: {_verdict_line(found, thresholds)}",
        f"containment: {found.containment:.4f} (needed {needed_c}, with up to {thresholds.allowance} "
        "characters of additions forgiven)",
        f"jaccard: {found.jaccard:.4f} (needed {needed_j})",
        f"simhash distance: {found.distance} (a candidate within {found.simhash_k})",
        f"content characters: A {found.a_chars}, B {found.b_chars}; in shared passages {alignment.shared} "
        f"({alignment.shared / max(1, alignment.a_chars):.0%} of A, {alignment.shared / max(1, alignment.b_chars):.0%} of B)",
        f"shared sentence keys (nshash): {len(found.shared_sentences)}",
        *(f"  {sentence}" for sentence in found.shared_sentences),
    ]
    if args.store:
        lines.append(f"boilerplate left out: {len(found.boilerplate)}")
        lines.extend(f"  {sentence}" for sentence in found.boilerplate)
    else:
        lines.append("boilerplate left out: none counted (give --store to count it across a store's stories)")
    if not alignment.complete:
        lines.append(f"note: long texts; shared passages marked within the first {MAX_ALIGN_CHARS:,} characters")
    lines += [
        "",
        f"=== A: {args.a} ===",
        marked_for_terminal(a, alignment.a_spans, colour),
        "",
        f"=== B: {args.b} ===",
        marked_for_terminal(b, alignment.b_spans, colour),
    ]
    return "\n".join(lines)


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


def _methods(value: str) -> tuple[str, ...]:
    try:
        return methods_from(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _line_options(parser: argparse.ArgumentParser) -> None:
    """The input, output and detector options of the commands that read JSON lines."""
    parser.add_argument("input", help="JSON lines file, - for stdin")
    parser.add_argument("-o", "--output", default="-", help="output JSON lines file, - for stdout")
    parser.add_argument("--text-field", default="text")
    parser.add_argument(
        "--key-field", default="id",
        help="field holding the record's key (default: id; note that the pipeline's "
        "NEARDUP_KEY_FIELD defaults to url); a record without one is keyed by its text's content",
    )
    parser.add_argument("--threshold", type=float, default=Thresholds().containment,
                        help="containment needed to call a candidate a duplicate")
    parser.add_argument("--min-chars", type=int, default=Thresholds().min_chars,
                        help="texts with fewer content characters are passed, not judged")
    parser.add_argument("--nshash-n", type=int, default=Recipe().nshash_n)
    parser.add_argument("--distance", type=int, default=Recipe().simhash_k,
                        help="SimHash Hamming distance")
    parser.add_argument("--ttl", type=float, default=0, help="time window in seconds (0: none)")
    parser.add_argument(
        "--methods", type=_methods, default=METHODS,
        help=f"candidate indexes, comma-separated (default: {','.join(METHODS)}); candidates are verified either way",
    )
    parser.add_argument("--workers", type=int, default=0,
                        help="processes that fingerprint in parallel (0: in this process)")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--flush", action=argparse.BooleanOptionalAction, default=True,
                        help="flush the output after each record (default on)")
    parser.add_argument("--max-warnings", type=int, default=20)


def _related_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--related", action="store_true",
        help="add the other stored stories that share a long passage with each record (a quote)",
    )
    parser.add_argument("--related-field", default="related", help="field the related stories are written to")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neardup", description="Near-duplicate news detection.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("dedup", help="mark or drop reprints in a JSON lines file")
    _line_options(run)
    run.add_argument("--drop", action="store_true", help="write first-seen records only")
    run.add_argument("--duplicate-of-field", default="duplicate_of")
    run.add_argument("--similar-id-field", default="similar_id")
    run.add_argument("--explain", action="store_true", help="add how each duplicate matched")
    run.add_argument(
        "--revisit", default="pass", choices=REVISITS,
        help="a record whose key was stored before with the same text: pass (default) or drop",
    )
    run.add_argument(
        "--prefer", default="first",
        help=f"which copy of a story to keep: {', '.join(PREFER_CHOICES)} (default first: the first "
        "seen), or a dotted path to a callable (new, stored) -> bool; a preferred later copy "
        "replaces the stored one and gets --replaces-field",
    )
    run.add_argument("--prefer-sources", default="",
                     help="for --prefer source: domains or site names, best first, comma-separated")
    run.add_argument("--source-field", default="",
                     help="field naming a record's site for --prefer source (default: the key's host)")
    run.add_argument("--replaces-field", default="replaces",
                     help="field that receives the key of the copy a preferred copy replaces")
    run.add_argument(
        "--report", metavar="PAGE.html",
        help="write a review page: a summary, then each duplicate beside its first copy, shared passages marked",
    )
    run.add_argument(
        "--keep-text", action="store_true",
        help="store each new story's text (compressed) beside its record, for later reports and export",
    )
    _related_options(run)
    _store_options(run)
    run.set_defaults(func=dedup)

    ask = commands.add_parser(
        "query", help="list the stored entries each record resembles, without changing the store"
    )
    _line_options(ask)
    ask.add_argument("-k", type=int, default=10, help="entries listed at most per record (default 10)")
    ask.add_argument(
        "--min-similarity", type=float, default=MIN_SIMILARITY,
        help=f"leave out entries of lower similarity (containment; default {MIN_SIMILARITY})",
    )
    ask.add_argument("--similar-field", default="similar", help="field the entries are written to")
    _related_options(ask)
    _store_options(ask)
    ask.set_defaults(func=query)

    old = commands.add_parser("purge", help="remove documents older than a time window")
    old.add_argument("--older-than", type=float, required=True, help="seconds")
    _store_options(old)
    old.set_defaults(func=purge)

    show = commands.add_parser("info", help="show a store's format, recipe and size")
    _store_options(show)
    show.set_defaults(func=info)

    dump = commands.add_parser("export", help="write every stored record as JSON lines")
    dump.add_argument("-o", "--output", default="-", help="output JSON lines file, - for stdout")
    _store_options(dump)
    dump.set_defaults(func=export)

    listing = commands.add_parser("list", help="list the stored records, one a line")
    _store_options(listing)
    listing.set_defaults(func=list_records)

    pair = commands.add_parser(
        "explain", help="would dedup call B a duplicate of A? the signals, and the shared passages marked"
    )
    pair.add_argument("a", help="the first copy: a file of text or HTML")
    pair.add_argument("b", help="the later copy, judged against A")
    pair.add_argument("--format", choices=["auto", "text", "html"], default="auto",
                      help="auto (default): HTML when a file starts with < or is named .htm/.html")
    pair.add_argument("--html", metavar="PAGE", help="also write the two texts side by side, marked, to PAGE")
    pair.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                      help="colour the shared passages (auto: on a terminal, unless NO_COLOR is set); "
                      "without colour they are written between [[ and ]]")
    pair.add_argument("--threshold", type=float, default=Thresholds().containment,
                      help="containment needed to call a candidate a duplicate")
    pair.add_argument("--min-chars", type=int, default=Thresholds().min_chars,
                      help="texts with fewer content characters are not judged")
    pair.add_argument("--nshash-n", type=int, default=Recipe().nshash_n)
    pair.add_argument("--distance", type=int, default=Recipe().simhash_k, help="SimHash Hamming distance")
    _store_options(pair)
    pair.set_defaults(func=explain_pair, store=None)

    find = commands.add_parser("lookup", help="show the records stored under a key")
    find.add_argument("key")
    _store_options(find)
    find.set_defaults(func=lookup)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit codes are listed in docs/cli.md."""
    args = build_parser().parse_args(argv)
    try:
        with _sigterm_as_interrupt():
            return args.func(args)
    except (CommandError, ValueError, StoreError) as exc:
        _warn(str(exc))
        return 2
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130



@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops a run as Ctrl-C does: the store is closed and the partial output file
    removed (the signal's default action would leave both)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
