"""What every ``neardup`` command shares: the error that ends it in one line, warnings, and the
detector's recipe and thresholds read from its options."""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from typing import Any

from ..engine.verdicts import Thresholds
from ..fingerprints.recipe import Recipe


class CommandError(Exception):
    """A problem with the command's files or options, told in one line (exit code 2)."""


def store_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The options every command opens its store with (open_store's keywords)."""
    return {"redis_allow_eviction": args.allow_eviction, "redis_allow_no_persistence": args.allow_no_persistence}


def warn(message: str) -> None:
    print(f"neardup: {message}", file=sys.stderr)


def _hidden(char: str) -> bool:
    """A character a terminal would act on or not show: a control or format character (an
    escape sequence, a direction override), a line separator or a lone surrogate."""
    return not char.isprintable() and unicodedata.category(char) not in ("Zs", "Co", "Cn")


def shown(text: str) -> str:
    """``text`` as a line on a terminal: what :func:`_hidden` finds written as \\x, \\u or \\U
    escapes (a stored key comes from crawled pages: it may hold anything)."""
    if text.isprintable():
        return text
    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        if _hidden(c)
        else c
        for c in text
    )


def json_line(value: object) -> str:
    """``value`` as one JSON line, readable (CJK as it is) but with every character
    :func:`_hidden` finds as a ``\\u`` escape: the same JSON value, safe on a terminal and
    writable as UTF-8 (a lone surrogate is not)."""
    line = json.dumps(value, ensure_ascii=False)
    if line.isprintable():
        return line
    return "".join(
        json.dumps(c)[1:-1] if _hidden(c) else c  # json.dumps escapes a character alone as \\uXXXX
        for c in line
    )


def recipe_and_thresholds(args: argparse.Namespace) -> tuple[Recipe, Thresholds]:
    """The fingerprint recipe and the thresholds of a command that judges texts."""
    recipe = Recipe(tokenizer=args.tokenizer, nshash_n=args.nshash_n, simhash_k=args.distance)
    return recipe, Thresholds.from_options(args.threshold, args.min_chars)
