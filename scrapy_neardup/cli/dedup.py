"""``neardup dedup``: each record is checked against the store and written back with
``duplicate_of`` and ``similar_id`` added (or dropped, with ``--drop``), and its story stored.

With ``--report`` it also gathers a review page: each duplicate beside its first copy.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable

from ..engine.detector import Detector
from ..engine.fields import OutputFields
from ..engine.prefer import policy_from
from ..engine.verdicts import DUPLICATE, REVISIT, SHORT, Verdict
from ..fingerprints.passages import passages_of
from ..review.collect import Review
from .common import CommandError, recipe_and_thresholds, shown, warn
from .lines import Batch, Outcomes, Parsed, Summary, check_written_fields, encoded, judged, run_lines, unjudged


def dedup(args: argparse.Namespace) -> int:
    args.outputs = OutputFields(args.duplicate_of_field, args.similar_id_field, args.replaces_field, args.related_field)
    check_written_fields(
        args,
        {
            "--duplicate-of-field": args.duplicate_of_field,
            "--similar-id-field": args.similar_id_field,
            "--related-field": args.related_field if args.related else None,
            "--replaces-field": args.replaces_field,
        },
    )
    try:
        args.policy = policy_from(args.prefer, [s for s in args.prefer_sources.split(",") if s.strip()])
    except ValueError as exc:
        raise CommandError(f"--prefer: {exc}") from None
    recipe, thresholds = recipe_and_thresholds(args)
    if not args.report:
        return run_lines(args, recipe, thresholds, _decide, Summary(), create=True)
    review = Review(args.report)
    try:
        decide = functools.partial(_decide, review=review)
        code = run_lines(args, recipe, thresholds, decide, Summary(), create=True)
        if code in (0, 3):  # a run stopped by its store reports what it did
            try:
                pages = review.write()
            except OSError as exc:  # checked before the run; the folder changed since
                warn(f"cannot write the review page {args.report}: {exc.strerror or exc}; the output was written")
                return 4
            shown = pages[0] if len(pages) == 1 else f"{pages[0]} and {len(pages) - 1} more pages"
            print(f"review page: {shown}", file=sys.stderr)
            for path in review.report.left_alone:
                warn(
                    f"{path} is not a page neardup wrote: left as it is, the pages after the first are named around it"
                )
        return code
    finally:
        review.close()


def _decide(
    detector: Detector, batch: Batch, args: argparse.Namespace, summary: Summary, review: Review | None = None
) -> Callable[[], Outcomes]:
    """Hand the batch to the store; the function returned gives, for each line, the line to
    write (None: dropped) and, if passed through untouched, why."""
    checked = judged(batch)
    passages = [passages_of(item.text or "") for item, _ in checked] if args.related else None
    sources = [_source(item, args) for item, _ in checked]
    texts: list[str | None] | None = [item.text or "" for item, _ in checked] if args.keep_text else None
    finish = detector.start_many([(item.key, fp) for item, fp in checked], passages, sources=sources, texts=texts)
    if review is not None and review.first_copies.read is None:
        review.first_copies.read = detector.store.texts

    def outcomes() -> Outcomes:
        verdicts = iter(finish())
        out: Outcomes = []
        for item, fingerprint in batch:
            problem = unjudged(item, fingerprint)
            if problem:
                if review is not None:
                    review.not_judged()
                out.append((item, (item.line, problem)))
            else:
                verdict = next(verdicts)
                if review is not None:
                    review.note(item.key, verdict, item.text, review.first_copy(verdict), item.title)
                out.append((item, _written(item, verdict, args, summary)))
        return out

    return outcomes


def _source(item: Parsed, args: argparse.Namespace) -> str:
    """The record's site for --prefer source: its --source-field as text, else "" (the key's host)."""
    value = item.record.get(args.source_field) if args.source_field and item.record else None
    return value.strip() if isinstance(value, str) else ""


def _written(
    item: Parsed, verdict: Verdict, args: argparse.Namespace, summary: Summary
) -> tuple[bytes | None, str | None]:
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
        if verdict.key_collision:
            summary.collisions += 1
            if summary.collisions <= args.max_warnings:
                warn(
                    f"{args.input}:{item.number}: key collision: {shown(item.key)} already holds another story; "
                    "this record is stored beside it as a story of its own and both are kept (--key-field should "
                    "tell sources apart)"
                )
    record = item.record
    assert record is not None
    record.update(args.outputs.tags(verdict))
    record.update(args.outputs.extras(verdict))
    summary.replaced += verdict.replaces is not None
    if args.explain and verdict.status == DUPLICATE:
        record["neardup"] = {
            "method": verdict.method,
            "jaccard": verdict.jaccard,
            "containment": verdict.containment,
            "distance": verdict.distance,
        }
    return encoded(item, args), None
