"""``neardup``: the detector on JSON lines, outside Scrapy.

``neardup dedup`` reads records in order and writes every one of them back, with
``duplicate_of`` and ``similar_id`` added; nothing is ever lost: a line that is not JSON, or
has no usable text, is reported with its line number and written out unchanged.

Where each part lives: ``parser`` (the commands and their options), ``dedup`` and ``query``
(what a judged record becomes), ``lines`` (the JSON lines engine both share, with ``files``,
``fingerprints`` and ``progress``), ``inspection`` (info, export, list, lookup, purge) and
``explain``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..stores import StoreError
from .common import CommandError, warn
from .parser import build_parser
from .stopping import stops_as_interrupt

__all__ = ["build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit codes are listed in docs/cli.md."""
    args = build_parser().parse_args(argv)
    try:
        with stops_as_interrupt():
            return args.func(args)
    except (CommandError, ValueError, StoreError) as exc:
        warn(str(exc))
        return 2
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130
