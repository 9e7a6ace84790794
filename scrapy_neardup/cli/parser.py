"""The ``neardup`` command line: every command, its options and their defaults.

Each command is a function of the parsed options that returns the exit code. Its module is
imported when the command runs, so that a command loads only what it uses (numpy, the
tokenizer, lxml, Twisted) and ``--help`` or a wrong option answers at once.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import NoReturn

from .. import __version__
from ..engine.prefer import PREFER_CHOICES
from ..engine.verdicts import METHODS, MIN_SIMILARITY, REVISITS, Thresholds, methods_from
from ..fingerprints.recipe import Recipe
from ..seconds import seconds

# Bytes of each file ``explain`` reads at most: as much of a page as a crawl judges
# (NEARDUP_MAX_HTML_SIZE).
MAX_BYTES = 5 * 1024 * 1024


def _command(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """The command ``name`` of this package's ``module``, imported when it runs."""

    def run(args: argparse.Namespace) -> int:
        command: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f".{module}", __package__), name)
        return command(args)

    return run


def _store_options(parser: argparse.ArgumentParser) -> None:
    """Which store, and how to open it; every command has them."""
    parser.add_argument(
        "--store",
        default="memory://",
        help="store URI: memory:// (default), leveldb:///path/to/dir, redis://host:port/db, "
        "redis+cluster://host:port[,host:port...]/",
    )
    parser.add_argument("--namespace", default="default", help="key space inside the store")
    parser.add_argument(
        "--allow-eviction",
        action="store_true",
        help="open a Redis store whose maxmemory-policy may evict keys (refused otherwise)",
    )
    parser.add_argument(
        "--allow-no-persistence",
        action="store_true",
        help="open a Redis store that keeps nothing across a restart: save '' and appendonly no (refused otherwise)",
    )
    parser.add_argument(
        "--tokenizer",
        default="auto",
        choices=["auto", "jieba", "rjieba"],
        help="auto: rjieba when installed, else jieba",
    )


def _methods(value: str) -> tuple[str, ...]:
    try:
        return methods_from(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds(zero: str | None = None) -> Callable[[str], float]:
    """An option in seconds, by the rule every option and setting in seconds follows."""

    def parse(value: str) -> float:
        try:
            return seconds(value, zero)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _at_least_one(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of 1 or more, got {value!r}")
    return number


def _judging_options(
    parser: argparse.ArgumentParser, min_chars_help: str, min_chars: int = Thresholds().min_chars
) -> None:
    """The thresholds and recipe of the commands that judge texts (read by recipe_and_thresholds)."""
    parser.add_argument(
        "--threshold",
        type=float,
        default=Thresholds().containment,
        help="containment needed to call a candidate a duplicate",
    )
    parser.add_argument("--min-chars", type=int, default=min_chars, help=f"{min_chars_help} (default {min_chars})")
    parser.add_argument("--nshash-n", type=int, default=Recipe().nshash_n)
    parser.add_argument("--distance", type=int, default=Recipe().simhash_k, help="SimHash Hamming distance")


def _line_options(parser: argparse.ArgumentParser) -> None:
    """The input, output and detector options of the commands that read JSON lines."""
    parser.add_argument("input", help="JSON lines file, - for stdin")
    parser.add_argument("-o", "--output", default="-", help="output JSON lines file, - for stdout")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing output file that neardup did not write (refused without it)",
    )
    parser.add_argument("--text-field", default="text", help="field holding the text to judge (default: text)")
    parser.add_argument(
        "--html-field",
        default="html",
        help="field holding a page's HTML, for records without text: its article body is extracted as "
        "the crawl extracts it (default: html, as NEARDUP_HTML_FIELD; '' for none)",
    )
    parser.add_argument(
        "--key-field",
        default=None,
        help="field holding the record's key (default: url, else id, whichever the first record has; "
        "said on stderr); a record without one is keyed by its whole content",
    )
    parser.add_argument(
        "--title-field",
        default="title",
        help="field holding the record's headline: a lead excerpt declaring it as its original title (原标题) "
        "is one story with the record; shown on the review page (default: title)",
    )
    _judging_options(parser, "texts with fewer content characters are passed, not judged")
    parser.add_argument("--ttl", type=_seconds("no time window"), default=0, help="time window in seconds (0: none)")
    parser.add_argument(
        "--methods",
        type=_methods,
        default=METHODS,
        help=f"candidate indexes, comma-separated (default: {','.join(METHODS)}); candidates are verified either way",
    )
    parser.add_argument(
        "--workers", type=int, default=0, help="processes that fingerprint in parallel (0: in this process)"
    )
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument(
        "--flush",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="flush the output after each record (default on)",
    )
    parser.add_argument("--max-warnings", type=int, default=20)


def _related_options(parser: argparse.ArgumentParser) -> None:
    """--related, for dedup and query."""
    parser.add_argument(
        "--related",
        action="store_true",
        help="add the other stored stories that share a long passage with each record (a quote)",
    )
    parser.add_argument("--related-field", default="related", help="field the related stories are written to")


class _Parser(argparse.ArgumentParser):
    """A wrong option is told in one line, as every other error of the command is (the
    usage it would print first is what ``--help`` shows)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """Every command with its options; each command's function is set as ``func``."""
    parser = _Parser(prog="neardup", description="Near-duplicate news detection.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("dedup", help="mark or drop reprints in a JSON lines file")
    _line_options(run)
    run.add_argument("--drop", action="store_true", help="write first-seen records only")
    run.add_argument("--duplicate-of-field", default="duplicate_of")
    run.add_argument("--similar-id-field", default="similar_id")
    run.add_argument("--explain", action="store_true", help="add how each duplicate matched")
    run.add_argument(
        "--revisit",
        default="pass",
        choices=REVISITS,
        help="a record whose key was stored before with the same text: pass (default) or drop",
    )
    run.add_argument(
        "--prefer",
        default="first",
        help=f"which copy of a story to keep: {', '.join(PREFER_CHOICES)} (default first: the first "
        "seen), or a dotted path to a callable (new, stored) -> bool; a preferred later copy "
        "replaces the stored one and gets --replaces-field",
    )
    run.add_argument(
        "--prefer-sources", default="", help="for --prefer source: domains or site names, best first, comma-separated"
    )
    run.add_argument(
        "--source-field", default="", help="field naming a record's site for --prefer source (default: the key's host)"
    )
    run.add_argument(
        "--replaces-field", default="replaces", help="field that receives the key of the copy a preferred copy replaces"
    )
    run.add_argument(
        "--report",
        metavar="PAGE.html",
        help="write a review page: a summary, then each duplicate beside its first copy, shared passages marked",
    )
    run.add_argument(
        "--keep-text",
        action="store_true",
        help="store each new story's text (compressed) beside its record, for later reports and export",
    )
    _related_options(run)
    _store_options(run)
    run.set_defaults(func=_command("dedup", "dedup"))

    ask = commands.add_parser("query", help="list the stored entries each record resembles, without changing the store")
    _line_options(ask)
    ask.add_argument("-k", type=int, default=10, help="entries listed at most per record (default 10)")
    ask.add_argument(
        "--min-similarity",
        type=float,
        default=MIN_SIMILARITY,
        help=f"leave out entries of lower similarity (containment; default {MIN_SIMILARITY})",
    )
    ask.add_argument("--similar-field", default="similar", help="field the entries are written to")
    _related_options(ask)
    _store_options(ask)
    ask.set_defaults(func=_command("query", "query"))

    old = commands.add_parser("purge", help="remove documents older than a time window")
    old.add_argument(
        "--older-than", type=_seconds(), required=True, help="seconds: documents stored longer ago are removed"
    )
    old.add_argument(
        "--paced",
        action="store_true",
        help="rest between batches, busy a twentieth of the time, so that crawls sharing the store "
        "(redis://, redis+cluster://) keep their rate meanwhile; about 20 times as long",
    )
    _store_options(old)
    old.set_defaults(func=_command("inspection", "purge"))

    show = commands.add_parser("info", help="show a store's format, recipe and size")
    _store_options(show)
    show.set_defaults(func=_command("inspection", "info"))

    dump = commands.add_parser("export", help="write every stored record as JSON lines")
    dump.add_argument("-o", "--output", default="-", help="output JSON lines file, - for stdout")
    dump.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing output file that neardup did not write (refused without it)",
    )
    _store_options(dump)
    dump.set_defaults(func=_command("inspection", "export"))

    listing = commands.add_parser("list", help="list the stored records, one a line")
    _store_options(listing)
    listing.set_defaults(func=_command("inspection", "list_records"))

    pair = commands.add_parser(
        "explain", help="would dedup call B a duplicate of A? the signals, and the shared passages marked"
    )
    pair.add_argument("a", help="the first copy: a file of text or HTML")
    pair.add_argument("b", help="the later copy, judged against A")
    pair.add_argument(
        "--format",
        choices=["auto", "text", "html"],
        default="auto",
        help="auto (default): HTML when a file starts with < or is named .htm/.html",
    )
    pair.add_argument("--html", metavar="PAGE", help="also write the two texts side by side, marked, to PAGE")
    for name in ("a", "b"):
        pair.add_argument(
            f"--title-{name}",
            metavar="HEADLINE",
            help=f"{name.upper()}'s headline, as a crawl's title field gives it: judged with it (原标题 lines naming it)",
        )
    pair.add_argument(
        "--max-bytes",
        type=_at_least_one,
        default=MAX_BYTES,
        help=f"bytes of each file read and judged at most (default {MAX_BYTES:,}: as much of a page as a crawl judges)",
    )
    pair.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour the shared passages (auto: on a terminal, unless NO_COLOR is set); "
        "without colour they are written between [[ and ]]",
    )
    _judging_options(pair, "texts with fewer content characters are not judged")
    _store_options(pair)
    pair.set_defaults(func=_command("explain", "explain_pair"), store=None)

    service = commands.add_parser(
        "serve", help="an HTTP service that checks entries before they are added, with a page for editors"
    )
    service.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; another address needs a token)"
    )
    service.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port)")
    service.add_argument(
        "--token",
        default=None,
        help="bearer token the API requires (default: $NEARDUP_SERVE_TOKEN; none: loopback only)",
    )
    service.add_argument(
        "--max-bytes",
        type=int,
        default=1 << 20,
        help="largest request body accepted, in bytes (default 1 MiB; larger: 413)",
    )
    service.add_argument(
        "--shutdown-timeout",
        type=_seconds("answer no request still in flight"),
        default=10.0,
        help="seconds a stop waits for the requests in flight (default 10)",
    )
    service.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes that fingerprint checked texts beside the service (default 1; 0: none)",
    )
    service.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="DEBUG logs one line per request",
    )
    _judging_options(
        service, "texts with fewer content characters are not judged (and not added)", Thresholds.entry_min_chars
    )
    _store_options(service)
    service.set_defaults(func=_command("serve", "serve"))

    find = commands.add_parser("lookup", help="show the records stored under a key")
    find.add_argument("key")
    _store_options(find)
    find.set_defaults(func=_command("inspection", "lookup"))
    return parser
