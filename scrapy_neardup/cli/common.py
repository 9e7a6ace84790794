"""What every ``neardup`` command shares: the error that ends it in one line, warnings, and the
detector's recipe and thresholds read from its options."""

from __future__ import annotations

import argparse
import sys

from ..engine.verdicts import Thresholds
from ..fingerprints.fingerprint import Recipe


class CommandError(Exception):
    """A problem with the command's files or options, told in one line (exit code 2)."""


def warn(message: str) -> None:
    print(f"neardup: {message}", file=sys.stderr)


def recipe_and_thresholds(args: argparse.Namespace) -> tuple[Recipe, Thresholds]:
    """The fingerprint recipe and the thresholds of a command that judges texts."""
    recipe = Recipe(tokenizer=args.tokenizer, nshash_n=args.nshash_n, simhash_k=args.distance)
    return recipe, Thresholds.from_options(args.threshold, args.min_chars)
