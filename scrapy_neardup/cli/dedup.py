"""``neardup dedup``: each record is checked against the store and written back with
``duplicate_of`` and ``similar_id`` added (or dropped, with ``--drop``), and its story stored.

With ``--report`` it also gathers a review page: each duplicate beside its first copy.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from dataclasses import dataclass
from typing import Callable

from ..engine.verdicts import DUPLICATE, REVISIT, SHORT, Verdict
from ..engine.detector import Detector
from ..fingerprints.passages import passages_of
from ..engine.prefer import policy_from
from ..review.page import FirstCopies, Pair, Report
from .common import CommandError, recipe_and_thresholds
from .lines import Batch, Outcomes, Parsed, Summary, check_related_field, encoded, judged, run_lines, unjudged


def dedup(args: argparse.Namespace) -> int:
    check_related_field(args, args.duplicate_of_field, args.similar_id_field)
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
    recipe, thresholds = recipe_and_thresholds(args)
    if not args.report:
        return run_lines(args, recipe, thresholds, _decide, Summary(), create=True)
    review = _Review(Report(args.report), FirstCopies())
    try:
        if os.path.isdir(args.report) or not os.path.isdir(os.path.dirname(os.path.abspath(args.report))):
            raise CommandError(f"cannot write the report {args.report}: not a file in an existing folder")
        decide = functools.partial(_decide, review=review)
        code = run_lines(args, recipe, thresholds, decide, Summary(), create=True)
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

    def note(self, item: Parsed, verdict: Verdict) -> None:
        if verdict.status == DUPLICATE:
            self.report.add(Pair(
                item.key, item.text or "", verdict.duplicate_of or "", self.copies.text(verdict.similar_id),
                verdict.method, verdict.containment, verdict.jaccard, verdict.distance,
            ))
            return
        self.report.count(verdict.status if verdict.status != SHORT else "not judged")
        if verdict.status != SHORT and verdict.doc_id == verdict.similar_id:
            self.copies.remember(verdict.similar_id, item.text or "")


def _decide(
    detector: Detector, batch: Batch, args: argparse.Namespace, summary: Summary, review: _Review | None = None
) -> Callable[[], Outcomes]:
    """Hand the batch to the store; the function returned gives, for each line, the line to
    write (None: dropped) and, if passed through untouched, why."""
    checked = judged(batch)
    passages = [passages_of(item.text or "") for item, _ in checked] if args.related else None
    sources = [_source(item, args) for item, _ in checked]
    texts = [item.text or "" for item, _ in checked] if args.keep_text else None
    finish = detector.start_many([(item.key, fp) for item, fp in checked], passages, sources=sources, texts=texts)
    if review is not None and review.copies.read is None:
        review.copies.read = detector.store.texts

    def outcomes() -> Outcomes:
        verdicts = iter(finish())
        out: Outcomes = []
        for item, fingerprint in batch:
            problem = unjudged(item, fingerprint)
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


def _source(item: Parsed, args: argparse.Namespace) -> str:
    """The record's site for --prefer source: its --source-field as text, else "" (the key's host)."""
    value = item.record.get(args.source_field) if args.source_field and item.record else None
    return value.strip() if isinstance(value, str) else ""


def _written(item: Parsed, verdict: Verdict, args: argparse.Namespace, summary: Summary) -> tuple[bytes | None, str | None]:
    """The line a judged record becomes (None: dropped), counted in the summary."""
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
    return encoded(item, args), None
