"""Passwords made of every character a URI gives a meaning to, and a check that none shows."""

from __future__ import annotations

from urllib.parse import quote

SECRET = "s3cr#t/x?y@z%"  # every character a URI gives a meaning to
WRONG = "wr0ng#/?@%pw"
PIECES = ("s3cr", "t/x", "x?y", "y@z", "wr0ng", "%pw")  # what a half-hidden password leaves


def shows_no_password(text: str) -> bool:
    return not any(piece in text for piece in PIECES) and quote(SECRET, safe="") not in text
