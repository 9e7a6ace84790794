"""What a verdict is and when a candidate counts as the same story: the statuses, the
thresholds, and the verdict and query answers both front ends write out.

The thresholds are one rule for the crawl and the CLI: :meth:`Thresholds.from_options` turns the
options a user gives (containment, minimum length) into the whole set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..fingerprints.recipe import MAX_SKETCH_KEYS, Recipe

if TYPE_CHECKING:
    from ..fingerprints.fingerprint import Fingerprint

UNIQUE = "unique"
DUPLICATE = "duplicate"
SHORT = "short"  # too little text to judge safely: passed, not stored
REVISIT = "revisit"  # the text stored under the same key (URL, id) seen again: nothing stored
REVISITS = ("pass", "drop")  # what becomes of a revisit (NEARDUP_REVISIT, neardup dedup --revisit)

METHODS = ("nshash", "simhash", "sketch")


def methods_from(value: str | Sequence[str]) -> tuple[str, ...]:
    """Candidate methods from a list or a comma-separated string, in the engine's order."""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"must be a list of methods among {', '.join(METHODS)}, got {value!r}")
    chosen = {n.strip().lower() for n in names if n.strip()}
    if not chosen or chosen - set(METHODS):
        raise ValueError(f"must name one or more of {', '.join(METHODS)}, got {value!r}")
    return tuple(m for m in METHODS if m in chosen)


@dataclass(frozen=True)
class Thresholds:
    """When a candidate counts as the same story (the rule itself: :mod:`.samestory`).

    A reprint keeps most of its shingles: containment of the smaller text in the larger is
    high even when the end was cut (a 75% cut keeps containment near 1, Jaccard near 0.75).
    Two articles sharing a disclaimer or a quoted sentence share a small part of either.
    Reprints also add lines of their own (banner, editor, promotion): ``allowance`` content
    characters of the smaller text, at most a fifth of it, may be such additions. A smaller
    text found whole in the larger needs only ``excerpt_jaccard``: a cut copy or an excerpt.

    Sharing much is not enough: a smaller text holding at most ``quote_share`` of the larger
    may be a story the larger quotes or collects, so it is the same story only as the
    larger's lead excerpt, with at least ``continuity`` of the weight of the words the larger
    repeats after that lead found in the lead too. Texts whose figures differ in
    ``other_figures`` places or more (and in a third of the smaller's) are other facts told
    with one template.
    """

    containment: float = 0.7
    jaccard: float = 0.35
    allowance: int = 60
    min_chars: int = 50  # texts shorter than this are not judged (SHORT)
    short_chars: int = 200  # below this, the stricter thresholds apply
    short_containment: float = 0.85
    short_jaccard: float = 0.4
    excerpt_jaccard: float = 0.25
    # A short text is filed and looked up under this many sketch keys instead of the recipe's
    # few: an edit in each of its sentences leaves it no sentence key, and few shingles make
    # each key likelier to change; more of its smallest shingle hashes keep a candidate.
    short_sketch_keys: int = 16
    # An entry service judges shorter texts: a script library's line is a text of its own,
    # while a crawled page with a caption of a few words is no article (``neardup serve``).
    entry_min_chars: ClassVar[int] = 20
    # The rule telling a story from a text that quotes it or a report of other facts (samestory).
    quote_share: float = 0.5
    continuity: float = 0.2
    inside_continuity: float = 0.5
    other_figures: int = 3

    def __post_init__(self) -> None:
        for name in (
            "containment",
            "jaccard",
            "short_containment",
            "short_jaccard",
            "excerpt_jaccard",
            "quote_share",
            "continuity",
            "inside_continuity",
        ):
            value = getattr(self, name)
            if not 0.0 < value <= 1.0:
                raise ValueError(f"threshold {name} must be in (0, 1], got {value}")
        if self.min_chars < 1:
            raise ValueError(f"min_chars must be at least 1, got {self.min_chars}")
        if self.allowance < 0:
            raise ValueError(f"allowance must not be negative, got {self.allowance}")
        if not 0 <= self.short_sketch_keys <= MAX_SKETCH_KEYS:
            raise ValueError(f"short_sketch_keys must be between 0 and {MAX_SKETCH_KEYS}, got {self.short_sketch_keys}")
        if self.other_figures < 1:
            raise ValueError(f"other_figures must be at least 1, got {self.other_figures}")

    def sketch_keys(self, fp: Fingerprint, recipe: Recipe) -> list[int]:
        """The sketch keys ``fp`` is filed and looked up under: the recipe's number, or
        ``short_sketch_keys`` for a text of fewer than ``short_chars`` content characters."""
        if not recipe.sketch_keys:
            return []
        count = self.short_sketch_keys if fp.chars < self.short_chars else recipe.sketch_keys
        return fp.sketch_keys[: max(count, recipe.sketch_keys)]

    @classmethod
    def from_options(cls, containment: float | None = None, min_chars: int | None = None) -> Thresholds:
        """The thresholds for the containment and minimum length a user chose (the pipeline's
        settings, the CLI's options): a short text is never held to less containment than a
        long one, so a higher ``containment`` raises the short texts' floor with it."""
        default = cls()
        containment = default.containment if containment is None else containment
        return cls(
            containment=containment,
            min_chars=default.min_chars if min_chars is None else min_chars,
            short_containment=max(containment, default.short_containment),
        )

    def forgiving(self, containment: float, smaller_chars: int) -> float:
        """``containment`` (the share of the smaller text's shingles found in the other) with
        the smaller text's own additions forgiven: ``allowance`` characters, a fifth at most."""
        allowance = min(self.allowance, smaller_chars // 5)
        return min(1.0, containment * smaller_chars / max(1, smaller_chars - allowance))

    def containment_floor(self, smaller_chars: int) -> float:
        return self.short_containment if smaller_chars < self.short_chars else self.containment

    def jaccard_floor(self, smaller_chars: int) -> float:
        return self.short_jaccard if smaller_chars < self.short_chars else self.jaccard


@dataclass
class Verdict:
    key: str
    status: str  # UNIQUE, DUPLICATE, REVISIT or SHORT
    doc_id: int | None = None  # the stored document (unique), or the reservation to release
    similar_id: int | None = None  # one id per story, shared by every copy
    duplicate_of: str | None = None  # key of the first stored copy
    method: str | None = None  # "nshash", "simhash" or "nshash+simhash"
    jaccard: float | None = None
    containment: float | None = None
    distance: int | None = None  # SimHash Hamming distance to the first copy
    chars: int = 0
    stored: bool = False  # this check filed a new document (to commit or release)
    # Asked for (passages given): other stored stories sharing a passage, [{"key", "shared"}].
    related: list[dict] | None = None
    # A copy that a policy preferred: the key of the stored copy it takes the place of. It
    # passes as the story's first copy (similar_id stays the story's).
    replaces: str | None = None
    # A copy of a pending document: the one whose outcome decides (in this process), and
    # whether to check again when it is committed too (the copy may then win, or the
    # pending one replaced the copy this verdict names).
    waits_for: int | None = None
    recheck: bool = False
    # A new text under a key whose stored text it is not, after normalisation, telling the
    # same story (an updated article): it took that document's place (its similar_id stays
    # the key's).
    updated: bool = False
    change: str | None = None  # for an updated text (or a key collision), what changed (for the log)
    # A new text under a key the store holds for another story (two sources numbering their
    # items alike): filed beside it as a story of its own; the stored story is kept.
    key_collision: bool = False
    # Filed with ``force`` though it matches a stored copy (an editor's "add anyway"): the key
    # of that copy. The text is a story of its own, a relative of that copy, not its duplicate.
    relative_of: str | None = None

    @property
    def is_duplicate(self) -> bool:
        return self.status == DUPLICATE

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass
class Similar:
    """A stored document that a queried text resembles (:meth:`Detector.query`)."""

    key: str
    similarity: float  # containment of the smaller text in the larger, as verification reads it
    jaccard: float
    duplicate: bool  # check() would call the text a duplicate of this document
    similar_id: int  # the stored document's id, its story's similar_id

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


# Candidates sharing less of the smaller text are left out of a query's answer: one shared
# sentence, a common disclaimer or a quote, not the same story.
MIN_SIMILARITY = 0.3
