"""The JSON lines engine of ``dedup`` and ``query``: read lines, parse and fingerprint them in
batches, let the command judge each batch, and write each line's outcome in input order.

Nothing is lost: a line that is not JSON, or has no usable text, is written back unchanged with
a warning naming its line number. The command decides only what a judged record becomes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..engine.batching import ahead, chunks, overlapped
from ..engine.detector import Detector
from ..engine.fields import check_fields
from ..engine.verdicts import Thresholds
from ..fingerprints.article import site_of
from ..fingerprints.fingerprint import Fingerprint, Recipe
from ..stores import StoreError, open_store
from ..stores.record import content_key
from .common import CommandError, store_flags, warn
from .files import Output, check_run_files, open_input
from .fingerprints import fingerprinting
from .progress import Progress
from .stopping import stops_deferred, until_stopped


@dataclass
class Summary:
    records: int = 0
    unique: int = 0
    duplicates: int = 0
    skipped: int = 0  # not JSON, not an object, no usable text, or too short to judge
    replaced: int = 0  # of the unique, those that replaced a stored copy (--prefer)
    updated: int = 0  # of the unique, new texts under a stored key (they replaced its document)
    revisits: int = 0  # keys seen again with the text stored under them
    collisions: int = 0  # of the unique, new stories under a key holding another (both kept)

    def line(self) -> str:
        replacing = f", {self.replaced} replacing a stored copy" if self.replaced else ""
        updated = f", {self.updated} updated" if self.updated else ""
        collided = f", {self.collisions} key collisions" if self.collisions else ""
        unique = f" ({(replacing + updated + collided)[2:]})" if replacing or updated or collided else ""
        revisits = f", {self.revisits} revisits" if self.revisits else ""
        return (
            f"{self.records} records: {self.unique} unique{unique}{revisits}, {self.duplicates} duplicates, "
            f"{self.skipped} skipped"
        )


def check_written_fields(args: argparse.Namespace, written: dict[str, str | None]) -> None:
    """The fields a command writes (option -> field) are fields of their own: neither the text
    or key field nor each other (:func:`~scrapy_neardup.engine.fields.check_fields`)."""
    if args.related and not args.related_field:
        raise CommandError("--related-field must name a field, got ''")
    try:
        check_fields({"--text-field": args.text_field, "--key-field": args.key_field}, written)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


@dataclass
class Parsed:
    number: int
    line: bytes  # as read, written back unchanged when the record is not judged
    record: dict | None = None
    text: str | None = None  # the text judged: the text field's, or the body extracted from the HTML
    key: str = ""
    problem: str | None = None
    source: str | None = None  # what is fingerprinted: the text, or the HTML (``is_html``)
    is_html: bool = False
    title: str | None = None  # the record's headline (--title-field): judged with it, shown on the review page


# Parsed lines with their fingerprints (or why there is none); each line's output (None:
# dropped) and, when it was passed through untouched, why.
Batch = list[tuple[Parsed, "Fingerprint | str | None"]]
Outcomes = list[tuple[Parsed, tuple[bytes | None, str | None]]]
# Hands a batch to the detector; the function returned gives the batch's outcomes.
Decide = Callable[[Detector, Batch, argparse.Namespace, Summary], Callable[[], Outcomes]]


def run_lines(
    args: argparse.Namespace, recipe: Recipe, thresholds: Thresholds, decide: Decide, summary: Summary, create: bool
) -> int:
    """Read JSON lines, fingerprint them and write each line's outcome, in input order.

    Shared by dedup and query: lines are bytes in and out, and a line that cannot be judged
    is written back unchanged with a warning naming it.
    """
    shown = 0
    check_run_files(args)
    keys = KeyField(args)
    skipped = Skipped()
    with contextlib.ExitStack() as stack:
        # The files first: a wrong path must not leave a new store behind.
        source = open_input(args.input)
        if source is not sys.stdin.buffer:
            stack.enter_context(source)
        output = Output(args.output, args.input, args.overwrite)
        stack.callback(output.discard)
        target = output.stream
        store = open_store(
            args.store,
            args.namespace,
            recipe,
            create=create,
            ttl=args.ttl or None,
            **store_flags(args),
        )
        stack.callback(store.close)
        detector = Detector(
            store, thresholds, ttl=args.ttl or None, methods=args.methods, prefer=getattr(args, "policy", None)
        )
        progress = Progress(args, source)
        stack.callback(progress.close)
        fingerprint = fingerprinting(args, detector, stack)

        def prepared(batch: list[tuple[int, bytes]]) -> Batch:
            parsed = [_parse(line, number, args, keys) for number, line in batch]
            sources = [(p.source, p.is_html, p.key, _site(p, args)) for p in parsed if p.source is not None]
            prints = iter(fingerprint(sources))
            out: Batch = []
            for item in parsed:
                found: Fingerprint | str | None = None
                if item.source is not None:
                    found, text = next(prints)
                    if item.is_html:
                        item.text = text  # the article body extracted from the record's HTML
                    if isinstance(found, Fingerprint):
                        found = found.with_title(item.title)  # judged with its headline (--title-field)
                out.append((item, found))
            return out

        # Batches of lines, each handed to the store before the next is read and fingerprinted
        # and written after: a shared store (Redis) checks a batch in one round trip meanwhile.
        # With --workers, a thread waits for the workers' fingerprints of the next batch. The
        # store knows a batch before its lines are written, so a killed run loses nothing; a
        # stopped one writes the lines of every batch handed over before it stops.
        batches: Iterator[Batch] = map(prepared, chunks(enumerate(until_stopped(source), start=1), 64))
        if args.workers:
            batches = ahead(batches)
        handed: list[Callable[[], Outcomes]] = []  # batches the store has, lines not written yet
        done = 0  # lines written (or dropped) so far

        def hand_over(batch: Batch) -> Callable[[], Iterator[None]]:
            with stops_deferred():
                handed.append(decide(detector, batch, args, summary))
            return write_first

        def write_first() -> Iterator[None]:
            nonlocal done, shown
            with stops_deferred():
                for item, (out, problem) in handed[0]():
                    done = item.number
                    summary.records += 1
                    progress.line(item.line)
                    if problem:
                        summary.skipped += 1
                        skipped.note(problem, item.record)
                        if shown < args.max_warnings:
                            warn(f"{args.input}:{item.number}: {problem}; passed through unchanged")
                            shown += 1
                    if out is not None:
                        target.write(out if out.endswith(b"\n") else out + b"\n")
                        if args.flush:
                            target.flush()
                handed.pop(0)
            return iter(())

        try:
            try:
                for _ in overlapped(batches, hand_over):
                    pass
            except KeyboardInterrupt:
                while handed:  # a second stop ends this at once
                    write_first()
                _stopped(args, output, done, summary, kept=create and store.lasting)
                raise
        except StoreError as exc:
            warn(
                f"{args.input}:{done + 1}: store failed ({exc}); stopped here: this line and the "
                "ones after it were not written"
            )
            output.finish()
            print(summary.line(), file=sys.stderr)
            return 3
        progress.close()
        output.finish()
    if shown < summary.skipped:
        warn(f"{summary.skipped - shown} more skipped lines not shown")
    if summary.collisions > args.max_warnings:
        warn(f"{summary.collisions - args.max_warnings} more key collisions not shown")
    print(summary.line(), file=sys.stderr)
    if summary.records and summary.skipped == summary.records:
        warn(f"no record was judged: {skipped.why(summary.records, args)}")
        return 4
    return 0


def _stopped(args: argparse.Namespace, output: Output, done: int, summary: Summary, kept: bool) -> None:
    """Say where a stopped run stopped. The stories it stored are in no output unless the lines
    written are kept: a rerun would take them for revisits (and leave them out with
    ``--revisit drop``), so the partial output is kept beside the old one, and named."""
    where = f"stopped after line {done} of {args.input}" if done else f"stopped before line 1 of {args.input}"
    if output.temp is None:
        warn(f"{where}: the lines up to it were written")
    elif kept and summary.unique:
        warn(
            f"{where}: the store took the records of lines 1-{done}, and they are written in {output.keep()} "
            f"({args.output} is left as it was); a rerun over this store finds them as revisits"
        )
    else:
        warn(f"{where}: {args.output} is left as it was")
    print(summary.line(), file=sys.stderr)


class KeyField:
    """The field naming a record: --key-field, else the first of ``url`` and ``id`` that the first
    record has (said once on stderr), else none: each record is then keyed by its content."""

    CHOICES = ("url", "id")

    def __init__(self, args: argparse.Namespace):
        self.field: str | None = args.key_field
        self.leave_out = written_fields(args)

    def of(self, record: dict) -> str:
        if self.field is None:
            self.field = next((name for name in self.CHOICES if name in record), "")
            if self.field:
                warn(f"records are keyed by their {self.field!r} field (--key-field names another)")
            else:
                warn(
                    "the records have no 'url' or 'id' field: each is keyed by its content (the whole "
                    "record), so only the same record seen again is a revisit (--key-field names a key field)"
                )
        value = record.get(self.field) if self.field else None
        return content_key(record, self.leave_out) if value is None or value == "" else str(value)


def written_fields(args: argparse.Namespace) -> set[str]:
    """Every field dedup and query write (as configured, else their defaults): a record's content
    key leaves them out, so the output of an earlier run keys as its input did."""
    options = {
        "duplicate_of_field": "duplicate_of",
        "similar_id_field": "similar_id",
        "replaces_field": "replaces",
        "related_field": "related",
        "similar_field": "similar",
    }
    return {getattr(args, option, default) for option, default in options.items()} | {"neardup"}


class Skipped:
    """Why lines were passed through unjudged, for the message of a run that judged nothing."""

    def __init__(self) -> None:
        self.reasons: Counter[str] = Counter()
        self.fields: Counter[str] = Counter()  # fields of the records that had no text to judge

    def note(self, problem: str, record: dict | None) -> None:
        self.reasons[problem.split(" (")[0]] += 1
        if record is not None:
            self.fields.update(str(name) for name, value in record.items() if value not in (None, ""))

    def why(self, records: int, args: argparse.Namespace) -> str:
        reasons = ", ".join(f"{count} {reason}" for reason, count in self.reasons.most_common())
        message = f"{records} of {records} lines skipped ({reasons})"
        if self.fields:
            have = ", ".join(repr(name) for name in sorted(self.fields))
            message += (
                f"; the records have the fields {have}: --text-field names the field holding the text, "
                "--html-field the one holding a page's HTML"
            )
        return message


def _parse(line: bytes, number: int, args: argparse.Namespace, keys: KeyField) -> Parsed:
    item = Parsed(number, line)
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
    item.record = record
    text, html = record.get(args.text_field), record.get(args.html_field) if args.html_field else None
    if isinstance(text, str) and text.strip():
        item.text = item.source = text
    elif isinstance(html, str) and html.strip():
        item.source, item.is_html = html, True
    else:
        also = f" or HTML in field {args.html_field!r}" if args.html_field else ""
        item.problem = f"no usable text in field {args.text_field!r}{also}"
        return item
    title = record.get(args.title_field) if getattr(args, "title_field", "") else None
    item.title = title.strip() if isinstance(title, str) and title.strip() else None
    item.key = keys.of(record)
    return item


def _site(item: Parsed, args: argparse.Namespace) -> str:
    """The record's site, for the site's own text in its HTML: --source-field, else its key's."""
    field = getattr(args, "source_field", "")
    value = item.record.get(field) if field and item.record else None
    return site_of(item.key, value if isinstance(value, str) else "")


def unjudged(item: Parsed, fingerprint: Fingerprint | str | None) -> str | None:
    """Why a line is passed through unjudged (not a record with text, or not fingerprinted)."""
    if item.problem:
        return item.problem
    if not isinstance(fingerprint, Fingerprint):
        return fingerprint or "no fingerprint"
    return None


def judged(batch: Batch) -> list[tuple[Parsed, Fingerprint]]:
    """The lines of a batch that have a record, a text and its fingerprint."""
    return [(item, fp) for item, fp in batch if not item.problem and isinstance(fp, Fingerprint)]


def encoded(item: Parsed, args: argparse.Namespace) -> bytes:
    """The item's record as a JSON line; undecodable input bytes go back out as they came. A
    lone surrogate that came as a JSON escape cannot be written as UTF-8: such a record is
    written with \\u escapes (the same JSON value), and a warning says so."""
    line = json.dumps(item.record, ensure_ascii=False)
    try:
        return line.encode("utf-8", "surrogateescape") + b"\n"
    except UnicodeEncodeError:
        warn(f"{args.input}:{item.number}: holds a lone surrogate; written with \\u escapes")
        return json.dumps(item.record, ensure_ascii=True).encode("ascii") + b"\n"
