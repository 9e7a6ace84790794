"""``neardup query``: each record written back with the stored entries it resembles, without
changing the store."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from ..engine.detector import Detector
from ..fingerprints.fingerprint import Fingerprint
from ..fingerprints.passages import passages_of
from .common import CommandError, recipe_and_thresholds
from .lines import Batch, Outcomes, Summary, check_written_fields, encoded, judged, run_lines, unjudged


@dataclass
class QuerySummary(Summary):
    similar: int = 0  # with similar entries but none marked duplicate

    def line(self) -> str:
        return (
            f"{self.records} records: {self.duplicates} with a duplicate stored, {self.similar} "
            f"with similar entries only, {self.unique} with none, {self.skipped} skipped"
        )


def query(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise CommandError(f"-k must be at least 1, got {args.k}")
    if not 0.0 <= args.min_similarity <= 1.0:
        raise CommandError(f"--min-similarity must be between 0 and 1, got {args.min_similarity}")
    check_written_fields(
        args, {"--similar-field": args.similar_field, "--related-field": args.related_field if args.related else None}
    )
    recipe, thresholds = recipe_and_thresholds(args)
    return run_lines(args, recipe, thresholds, _answer, QuerySummary(), create=False)


def _answer(detector: Detector, batch: Batch, args: argparse.Namespace, summary: Summary) -> Callable[[], Outcomes]:
    """Query's counterpart of dedup's decision: each record with its similar stored entries."""
    asked = [(item, fp) for item, fp in judged(batch) if fp.chars >= detector.thresholds.min_chars]
    answers = detector.query_many([fp for _, fp in asked], args.k, args.min_similarity, [item.key for item, _ in asked])
    found = {id(item): answer for (item, _), answer in zip(asked, answers)}
    related = {}
    if args.related:
        own_story = [{s.similar_id for s in answer if s.duplicate} for answer in answers]
        passages = [passages_of(item.text or "") for item, _ in asked]
        lists = detector.related(passages, own_story, [item.key for item, _ in asked])
        related = {id(item): listed for (item, _), listed in zip(asked, lists)}

    def outcomes() -> Outcomes:
        out: Outcomes = []
        for item, fingerprint in batch:
            problem = unjudged(item, fingerprint)
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
                out.append((item, (encoded(item, args), None)))
        return out

    return outcomes
