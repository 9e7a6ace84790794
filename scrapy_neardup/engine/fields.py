"""The fields a verdict is written to, in a crawl's items and in the command line's records.

One rule for both front ends: every field a run writes is a field of its own, neither a field
it reads (the item's own data would be overwritten) nor another field it writes (one value
would overwrite the other).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .verdicts import Verdict

__all__ = ["OutputFields", "check_fields"]


def check_fields(
    read: Mapping[str, str | None],
    written: Mapping[str, str | None],
    may_share: Collection[tuple[str, str]] = (),
) -> None:
    """Raise ValueError naming both options when a field in ``written`` is one in ``read`` or
    another one in ``written``.

    Both map an option's name, as the user wrote it (``NEARDUP_KEY_FIELD``, ``--key-field``),
    to its field; an option without a field (off) is left out. ``may_share`` lists the
    (written, other) option pairs that may name one field.
    """
    taken = {field: option for option, field in read.items() if field}
    for option, field in written.items():
        if not field:
            continue
        other = taken.get(field)
        if other is not None and (option, other) not in may_share:
            harm = "the item's own data" if other in read else "the other's value"
            raise ValueError(
                f"{option} {field!r} is also {other}: writing it would overwrite {harm}; name a field of its own"
            )
        taken.setdefault(field, option)


@dataclass(frozen=True)
class OutputFields:
    """Where a verdict is written: the tags (``duplicate_of``, ``similar_id``), the key of the
    copy a preferred copy replaces, and the related stories."""

    duplicate_of: str = "duplicate_of"
    similar_id: str = "similar_id"
    replaces: str = "replaces"
    related: str = "related"

    def tags(self, verdict: Verdict) -> dict[str, Any]:
        """The tags: ``duplicate_of`` (None for a story's first copy) and ``similar_id``."""
        return {self.duplicate_of: verdict.duplicate_of, self.similar_id: verdict.similar_id}

    def extras(self, verdict: Verdict) -> dict[str, Any]:
        """What only some verdicts carry: the replaced copy's key, the related stories."""
        found: dict[str, Any] = {}
        if verdict.replaces is not None:
            found[self.replaces] = verdict.replaces
        if verdict.related is not None:
            found[self.related] = verdict.related
        return found

    def names(self) -> tuple[str, ...]:
        """Every field a verdict may be written to (a record's content key leaves them out)."""
        return (self.duplicate_of, self.similar_id, self.replaces, self.related)
