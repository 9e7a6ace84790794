"""Which copy of a story to keep: the policies of ``NEARDUP_PREFER``.

First seen wins by default. In news that is often the wrong copy: a portal posts a cut-down
excerpt minutes before the source site publishes the whole article. A policy compares a new
copy with the story's stored copy (both verified to be the same story) and says whether the
new one should take its place. ``longest`` prefers the complete article, ``source`` the
site ranked higher, and a callable of the user's decides as it likes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..dotted import load_dotted

PREFER_CHOICES = ("first", "longest", "source")


@dataclass(frozen=True)
class Copy:
    """One copy of a story, as a policy sees it."""

    key: str  # usually the URL
    chars: int  # content characters (letters, digits, CJK), as the engine counts them
    source: str  # the site: the source field, else the key's host without "www."
    # This copy holds the other one whole and adds at least one sentence of the same story
    # beyond a reprint's own lines (the engine's judgement, engine.samestory): the complete article beside its excerpt.
    extends: bool = False


# (new copy, stored copy) -> True when the new copy should replace the stored one.
Policy = Callable[[Copy, Copy], bool]


def source_of(key: str, given: str = "") -> str:
    """The site a copy came from: ``given`` (an item's source field) when set, else the host
    of a URL key, lower-cased and without a leading ``www.``; "" for other keys."""
    if given:
        return given.strip().lower()
    try:
        host = urlsplit(key).hostname if "://" in key else None
    except ValueError:
        host = None
    if not host:
        return ""
    return host[4:] if host.startswith("www.") else host


def prefer_longest(new: Copy, stored: Copy) -> bool:
    """The complete article over an excerpt: a copy that holds the stored one whole and adds
    at least one sentence of the same story. Two copies of one length never replace each
    other, nor does a copy whose extra length is a line of dressing."""
    return new.extends


class PreferSources:
    """A copy from a site ranked higher in ``sources`` (domains or site names, best first)
    replaces one from a site ranked lower or not listed. A domain covers its subdomains:
    ``xinhuanet.com`` ranks ``www.news.xinhuanet.com`` too."""

    def __init__(self, sources: Sequence[str]):
        self.sources = [s.strip().lower().removeprefix("www.") for s in sources if s.strip()]
        if not self.sources:
            raise ValueError(
                "the source policy needs a list of domains or site names, best first "
                "(NEARDUP_PREFER_SOURCES, or --prefer-sources)"
            )

    def rank(self, source: str) -> int:
        for rank, name in enumerate(self.sources):
            if source == name or source.endswith("." + name):
                return rank
        return len(self.sources)

    def __call__(self, new: Copy, stored: Copy) -> bool:
        return self.rank(new.source) < self.rank(stored.source)


def policy_from(name: str | Callable, sources: Sequence[str] = ()) -> Policy | None:
    """The policy named by ``name`` (``first``: None, no replacement), raising ValueError
    with what is wrong. A dotted path or a callable is the user's own ``(new, stored) -> bool``."""
    if callable(name):
        return name
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"must be one of {', '.join(PREFER_CHOICES)} or a dotted path to a callable, got {name!r}")
    name = name.strip()
    if name.lower() == "first":
        return None
    if name.lower() == "longest":
        return prefer_longest
    if name.lower() == "source":
        return PreferSources(sources)
    if "." not in name:
        raise ValueError(f"must be one of {', '.join(PREFER_CHOICES)} or a dotted path to a callable, got {name!r}")
    try:
        found = load_dotted(name)
    except (ImportError, ValueError, AttributeError) as exc:
        raise ValueError(f"cannot import {name!r}: {exc}") from None
    if not callable(found):
        raise ValueError(f"{name!r} is not callable")
    return found
