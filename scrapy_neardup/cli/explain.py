"""``neardup explain A B``: would dedup call B a duplicate of A, and why; the signals against
their thresholds, then both texts with the shared passages marked (and, with ``--html``, a page)."""

from __future__ import annotations

import argparse
import contextlib
import html
import os
import sys

from ..engine.verdicts import DUPLICATE, SHORT, Thresholds
from ..fingerprints.article import not_article
from ..fingerprints.extract import ExtractionError, decode_html, html_to_text, looks_binary
from ..review.explain import Explanation, explain
from ..review.files import check_distinct, check_page
from ..review.marking import MAX_ALIGN_CHARS, marked_for_terminal
from ..review.page import Pair, page, pair_section, write_file
from ..stores import open_store, store_folder
from .common import CommandError, recipe_and_thresholds, store_flags


def explain_pair(args: argparse.Namespace) -> int:
    """Would dedup call B a duplicate of A, and why: the signals and the shared passages."""
    if args.html:
        page_option = "the page (--html)"
        try:
            check_distinct(
                [("A", args.a), ("B", args.b), (page_option, args.html)],
                [("the store's folder (--store)", store_folder(args.store) if args.store else None)],
            )
            check_page(args.html, page_option)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    (first, _, first_cut), (second, second_html, second_cut) = (
        _read_document(path, args.format, args.max_bytes) for path in (args.a, args.b)
    )
    reason = not_article(second) if second_html else None
    if reason:  # the rule the pipeline applies to a page's extracted text
        print(
            f"not judged: B's extracted text is not an article ({reason}); a crawl passes such a page "
            "without judging it (neardup/not_article)"
        )
        return 0
    recipe, thresholds = recipe_and_thresholds(args)
    with contextlib.ExitStack() as stack:
        store = None
        if args.store:
            store = stack.enter_context(
                open_store(
                    args.store,
                    args.namespace,
                    recipe,
                    create=False,
                    **store_flags(args),
                )
            )
        found = explain(first, second, recipe, thresholds, store, titles=(args.title_a, args.title_b))
    colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    notes = [
        f"note: {name} ({path}) is larger than --max-bytes {args.max_bytes:,}: its first {cut:,} bytes were read and judged"
        for name, path, cut in (("A", args.a, first_cut), ("B", args.b, second_cut))
        if cut is not None
    ]
    print(_explained(found, args, thresholds, colour, first, second, notes))
    if args.html:
        pair = Pair(
            args.b,
            second,
            args.a,
            first,
            found.verdict.method,
            round(found.containment, 4),
            round(found.jaccard, 4),
            found.distance,
        )
        body = (
            f'<p class="signals">{html.escape(_verdict_line(found, thresholds))}</p>\n'
            f'<p class="signals">{html.escape(found.judgement.reason("A", "B"))}</p>\n'
        )
        document = page(f"neardup explain: {args.a} / {args.b}", body + pair_section(pair, found.alignment))
        try:
            write_file(args.html, document)
        except OSError as exc:
            raise CommandError(f"cannot write {args.html}: {exc.strerror or exc}") from None
    return 0


def _read_document(path: str, form: str, limit: int) -> tuple[str, bool, int | None]:
    """The text of a file for ``explain``, whether it was HTML (which goes through the
    extraction a crawl uses), and, when the file was longer than ``limit`` bytes, how many were
    read: up to ``limit``, ending at a line end, so a device or a huge file is not read whole."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    cut = None
    if len(data) > limit:
        line_end = data.rfind(b"\n", 0, limit)
        data = data[: line_end + 1 if line_end > 0 else limit]
        cut = len(data)
    if looks_binary(data):
        read = f"its first {len(data)} bytes are" if cut is not None else f"{len(data)} bytes of"
        raise CommandError(f"{path} is not text ({read} binary content)")
    if form == "auto":
        start = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        form = "html" if start == b"<" or path.lower().endswith((".htm", ".html")) else "text"
    try:
        text = html_to_text(data) if form == "html" else decode_html(data).removeprefix("\ufeff")
    except ExtractionError as exc:
        raise CommandError(f"cannot read {path} as HTML: {exc}") from None
    if not text.strip():
        raise CommandError(f"{path} has no text" + (" in its article body" if form == "html" else ""))
    return text, form == "html", cut


def _verdict_line(found: Explanation, thresholds: Thresholds) -> str:
    verdict = found.verdict
    if verdict.status == DUPLICATE:
        return f"duplicate: dedup would call B a reprint of A (found by {verdict.method})"
    if verdict.status == SHORT:
        return f"not judged: B has {verdict.chars} content characters, fewer than {thresholds.min_chars}"
    if found.a_chars < thresholds.min_chars:
        return f"not a duplicate: A has {found.a_chars} content characters, too few to be stored"
    return "not a duplicate: dedup would keep B as a story of its own"


def _explained(
    found: Explanation,
    args: argparse.Namespace,
    thresholds: Thresholds,
    colour: bool,
    a: str,
    b: str,
    notes: list[str],
) -> str:
    """The verdict, each signal beside the threshold it was held to, then both texts marked."""
    short = min(found.a_chars, found.b_chars) < thresholds.short_chars
    needed_c = thresholds.short_containment if short else thresholds.containment
    needed_j = thresholds.short_jaccard if short else thresholds.jaccard
    alignment = found.alignment
    lines = [
        f"verdict: {_verdict_line(found, thresholds)}",
        f"rule: {found.judgement.reason('A', 'B')}",
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
    lines += notes
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
