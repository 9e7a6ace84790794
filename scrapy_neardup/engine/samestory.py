"""Are two texts one story? The rule every verdict comes from (the check, a query, a policy's
choice, ``neardup explain``), on what both stored records hold, so that it gives the same
answer whichever text came first.

Sharing much is not enough. Four cases share much and only two are one story:

- a reprint: texts of comparable length, most of the smaller found in the larger;
- a lead excerpt: a portal's first paragraphs of an article. The shared passage is the start
  of the complete text, and what the complete text adds goes on with the same story: the
  words its lead repeats (people, places, things) come back after it;
- a quoted story: a commentary or a roundup holding a whole story amid text of its own. The
  story may sit anywhere, and what surrounds it repeats words of its own, or a news dateline
  starts another story there (an article has one, under its headline);
- a template report with other facts: a weather report, a market close, a lottery draw of
  another day shares the template's sentences, not the figures (in texts of one length, a
  figure changed shows in both).

So: a smaller text holding at most ``quote_share`` of the larger is the same story only as its
lead excerpt (the lead test and the continuity test below); a larger share is a reprint when
the usual containment and Jaccard floors hold; and either is another story when the smaller
text's figures are missing from the larger (:class:`Thresholds` ``other_figures``).

A text's own claim to be a repost (an excerpt's 原标题 line, cut as a notice) is not by itself a
sign of a lead excerpt: a short story reposted under such a line is quoted whole at the start of
a commentary too, so the claim is also on the smaller text of a pair that is two stories. What
the claim names is: "原标题：X" says "this text is the article headlined X", so when one text
declares the other's own headline (both given: the item's title field) and the smaller text,
held whole, opens the larger, the two are one story without the continuity test: a lead
excerpt named by its article's title. A commentary quoting a reposted story has a headline of
its own, not the story's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Protocol

import numpy as np

from ..fingerprints.sketch import Sketch, resemblance
from ..fingerprints.storywords import BINS, FIGURES, StoryWords
from .verdicts import Thresholds

REPRINT = "reprint"
LEAD_EXCERPT = "lead excerpt"
QUOTED_STORY = "quoted story"
OTHER_FACTS = "other facts"
TOO_DIFFERENT = "too different"

OPENING = "opening"
SCATTERED = "scattered"
INSIDE = "inside"

# Where the shared passage sits: the larger text is cut into BINS parts (storywords.BINS); a
# part at least PASSAGE_PART of whose sketch hashes the smaller text holds is the passage's,
# one at most OWN_PART of whose hashes it holds is the larger text's own.
PASSAGE_PART = 0.6
OWN_PART = 0.25
# Figures of the smaller text missing from the larger, past ``Thresholds.other_figures``, make
# other facts when they are at least this share of the figures compared.
OTHER_FIGURES_SHARE = 0.25
# As many figures missing (an edit may turn one date into a figure) and the allowance for a
# copy's own lines is not given. In texts of one length, give or take less than a sentence
# (ADDED_CHARS), a figure of each missing from the other counts both ways.
FIGURES_UNFORGIVEN = 2
# Texts of comparable length whose story words agree (at least AGREEMENT of the smaller's
# weight, of AGREEMENT_WORDS words or more) and whose figures all agree tell one story even
# with RESCUE less containment: a reprint edited in many places keeps its people, places,
# things and figures.
AGREEMENT = 0.8
AGREEMENT_WORDS = 5
RESCUE = 0.15
# The rest of a complete article keeps telling its lead's story: in at least this share of the
# parts it adds, a story word of the lead comes back. A roundup's later stories, each on its
# own subject, bring back the first story's words in a part here and there.
REACH = 0.5
# Or the rest keeps much of the lead's words (an interview or a feature moving from one side of
# its story to the next): continuity of at least STRONG_CONTINUITY, reaching a third of its
# parts. A quoting text's or a roundup's rest shares less of the story's words.
STRONG_CONTINUITY = 0.45
STRONG_REACH = 1 / 3
# Paragraphs picked out of the larger text, in several pieces with its own parts between them
# (a cut copy), need only some of their words back in its own parts: a text quoting a story or
# a roundup carrying one holds it in one piece.
PICKED_CONTINUITY = 0.1
# An excerpt is held whole by its article: its own additions (within the allowance) aside, at
# least this share of it is found there.
EXCERPT_WHOLE = 0.85
HELD_SAMPLES = 16
# A copy holding another whole (forgiving containment at least this) that adds at least
# ADDED_CHARS content characters (a sentence) of the same story extends it: the better copy to
# keep (:func:`_adds_story`). A reprint that only adds lines of its own (a headline, a source
# line, an editor line, a promotion) is no more complete than its source.
HOLDS_WHOLE = 0.9
ADDED_CHARS = 15
# A larger text in whose parts news datelines start this many stories carries stories side by
# side (a roundup of agency reports): an article starts one.
STORIES_STARTED = 2
# The smaller text starts in the larger where the first START_SHINGLES of its shingles found
# there sit (the last of them: a headline repeating the lead's words holds some earlier).
START_SHINGLES = 3


class Traits(Protocol):
    """What the rule reads of a text: a fingerprint, or a stored record."""

    @property
    def chars(self) -> int: ...
    @property
    def sketch(self) -> Sketch: ...
    @property
    def story_words(self) -> StoryWords | None: ...
    @property
    def digest(self) -> int: ...
    @property
    def title(self) -> int: ...
    @property
    def declared(self) -> int: ...


@dataclass(frozen=True)
class Judgement:
    """The answer for a pair of texts, and the figures it came from."""

    rule: str  # REPRINT, LEAD_EXCERPT, QUOTED_STORY, OTHER_FACTS or TOO_DIFFERENT
    same_story: bool
    jaccard: float
    containment: float  # of the smaller text in the larger, estimated from the sketches
    share: float  # the smaller text's content characters over the larger's
    larger: int  # 0: the first text given is the larger, 1: the second, -1: equal length
    position: str | None = None  # where the shared passage sits in the larger text: OPENING, SCATTERED, INSIDE
    continuity: float | None = None  # how much the larger text's own parts tell the same story (0-1)
    reach: float | None = None  # share of the larger text's own parts where words of the passage come back
    dateline: bool = False  # a news dateline starts another story in the larger text's own parts
    other_figures: int = 0  # figures of the smaller text missing from the larger
    figures: int = 0  # figures of the smaller text compared
    changed_figures: int = 0  # other_figures, and in texts of one length the larger's missing from the smaller
    named: bool = False  # one text declares the other's headline as its original title (原标题)
    adds_story: Callable[[], bool] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def extends(self) -> bool:
        """The larger holds the smaller whole and adds at least a sentence of its story. Asked
        only when a policy needs it: the costliest test of the rule, and most checks need none."""
        return self.adds_story is not None and self.adds_story()

    def reason(self, first: str = "A", second: str = "B") -> str:
        """The rule that decided, in words for a reviewer (the texts named ``first``, ``second``)."""
        small, large = (second, first) if self.larger == 0 else (first, second)
        percent = f"{100 * self.share:.0f}%"
        if self.rule == OTHER_FACTS:
            return (
                f"template report with other facts: {self.other_figures} of the {self.figures} figures "
                f"of {small} are not in {large}, though they share {100 * self.containment:.0f}% of "
                f"{small}'s text (the template): other reports, not one story"
            )
        if self.rule == QUOTED_STORY:
            where = "opens" if self.position == OPENING else "is not the start of"
            if self.dateline:
                goes_on = "a dateline in the rest starts another story"
            elif self.continuity is None:
                goes_on = "the rest repeats no words of it"
            else:
                goes_on = (
                    f"the rest tells other things (its words and {small}'s agree by {100 * self.continuity:.0f}%, "
                    f"and {small}'s words come back in {100 * (self.reach or 0):.0f}% of the rest)"
                )
            return (
                f"quoted story: {large} holds {small} ({100 * self.containment:.0f}% of it) amid text of its "
                f"own ({small} is {percent} of {large}); the shared passage {where} {large}, and {goes_on}: "
                f"a text quoting or collecting a story, not a copy of it"
            )
        if self.rule == LEAD_EXCERPT and self.named:
            return (
                f"lead excerpt: {small} is the opening {percent} of {large} ({100 * self.containment:.0f}% of it "
                f"found there), and the original title one of them declares (原标题) is the other's headline: "
                f"one story"
            )
        if self.rule == LEAD_EXCERPT:
            return (
                f"lead excerpt: {small} is the opening {percent} of {large} ({100 * self.containment:.0f}% of it "
                f"found there), and {large} goes on with the same story (its words and {small}'s agree by "
                f"{100 * (self.continuity or 0):.0f}%, and {small}'s words come back in "
                f"{100 * (self.reach or 0):.0f}% of the rest): one story"
            )
        if self.rule == REPRINT:
            return (
                f"reprint: {100 * self.containment:.0f}% of {small} is in {large} (Jaccard {self.jaccard:.2f}, "
                f"{small} is {percent} of {large}): one story"
            )
        changed = (
            f", and {self.changed_figures} figures differ between them (facts changed, so no allowance for "
            f"lines of a copy's own)"
            if self.changed_figures >= FIGURES_UNFORGIVEN
            else ""
        )
        return (
            f"too different: {100 * self.containment:.0f}% of {small} is in {large}, Jaccard "
            f"{self.jaccard:.2f}{changed}: not enough for one story"
        )


def judge(a: Traits, b: Traits, thresholds: Thresholds | None = None) -> Judgement:
    """Whether ``a`` and ``b`` are one story, by the rule of this module. Symmetric: the
    same answer for (a, b) and (b, a), whichever was stored first."""
    thresholds = thresholds or Thresholds()
    larger = 0 if a.chars > b.chars else 1 if b.chars > a.chars else -1
    small, large = (b, a) if larger == 0 else (a, b)
    share = small.chars / max(1, large.chars)
    jaccard, containment = resemblance(a.sketch, b.sketch)
    if thresholds.forgiving(containment, small.chars) < thresholds.containment_floor(small.chars) - RESCUE:
        # Too little shared for any figures or story words to make one story: most candidates
        # of a lookup end here, so their costlier figures are not computed.
        return Judgement(TOO_DIFFERENT, False, jaccard, containment, share, larger)
    forward = _figures(small, large)
    backward = _figures(large, small) if large.chars - small.chars < ADDED_CHARS else (0, 0)
    figures = forward if larger != -1 else max(forward, backward)
    # In texts of one length (give or take less than a sentence), a figure of each that the
    # other lacks is a figure changed, and both count: a forecast of another day whose numbers
    # coincide as a set but for one. The larger's alone may be a cut copy's last sentence.
    changed = max(figures[0], forward[0] + (backward[0] if forward[0] else 0))
    # The allowance forgives a copy's own lines (banner, editor, promotion); a text whose
    # figures differ adds no lines, its facts differ (a template report of another day).
    forgiving = containment if changed >= FIGURES_UNFORGIVEN else thresholds.forgiving(containment, small.chars)
    found = partial(
        Judgement,
        jaccard=jaccard,
        containment=containment,
        share=share,
        larger=larger,
        other_figures=figures[0],
        figures=figures[1],
        changed_figures=changed,
    )
    other_facts = figures[0] >= thresholds.other_figures and figures[0] >= OTHER_FIGURES_SHARE * figures[1]
    # A copy whose story words and figures are the other's may have lost more shingles to
    # edits: below the floor by RESCUE at most, it is rescued. The words are compared only
    # where they decide (most reprints hold the other whole: their words are never made).
    floor = thresholds.containment_floor(small.chars)
    rescued = floor - RESCUE <= forgiving < floor and _words_agree(small, large, changed)
    if forgiving < floor and not rescued:
        return found(TOO_DIFFERENT, False)
    if other_facts:
        return found(OTHER_FACTS, False)

    def extends(same: bool) -> bool:  # asked only of one story: the costliest test comes last
        return same and forgiving >= HOLDS_WHOLE and larger != -1 and _adds_story(small, large, thresholds.allowance)

    if share > thresholds.quote_share:
        whole = forgiving >= HOLDS_WHOLE or rescued or _words_agree(small, large, changed)
        same = jaccard >= (thresholds.excerpt_jaccard if whole else thresholds.jaccard_floor(small.chars))
        return found(REPRINT if same else TOO_DIFFERENT, same, adds_story=partial(extends, same))
    passage, own = _parts(small.sketch, large.sketch)
    where = _position(passage, own)
    continuity = _continuity(small.story_words, large.story_words, passage, own)
    reach = _reach(large.story_words, passage, own)
    floor = thresholds.inside_continuity if where == INSIDE else thresholds.continuity
    # An excerpt is found whole in the article; a smaller text with more of its own quotes it.
    held = thresholds.forgiving(_held(small.sketch, large.sketch, containment), small.chars)
    # News datelines start stories, an article's one under its headline. After an opening
    # passage, a dateline in the larger text's own parts, or past the passage's first part when
    # the larger text starts more stories than the smaller, starts another story: a roundup.
    # Before a passage inside the larger text may stand the article's own dateline (an excerpt
    # skipping the first paragraphs), under its headline; one further on, or any outside the
    # passage when the larger text starts STORIES_STARTED or more, starts another story: stories
    # side by side. (Paragraphs picked out of an article may skip one of its datelines.)
    datelines = large.story_words.datelines if large.story_words is not None else 0
    outside = datelines & ~passage
    if where == OPENING:
        more = datelines.bit_count() > (small.story_words.datelines.bit_count() if small.story_words is not None else 0)
        through_first_part = (passage & -passage) * 2 - 1  # the passage's first part and those before it
        another = bool(outside & own) or (more and bool(datelines & ~through_first_part))
    else:
        headline = _headline(large.chars, thresholds.allowance)
        another = where == INSIDE and (
            bool(outside & ~headline) or (bool(outside) and datelines.bit_count() >= STORIES_STARTED)
        )
    if where == SCATTERED:  # paragraphs picked out of it: a quoted story is held in one piece
        goes_on = continuity is not None and continuity >= PICKED_CONTINUITY
    else:
        goes_on = continuity is not None and (
            (continuity >= floor and reach >= REACH)
            or (continuity >= max(floor, STRONG_CONTINUITY) and reach >= STRONG_REACH)
        )
    # A smaller text held whole at the larger's start, one naming the other's headline as its
    # original title: the article's lead, however the rest goes on.
    named = where == OPENING and not another and _names(small, large)
    same = held >= EXCERPT_WHOLE and (goes_on or named) and not another
    return found(
        LEAD_EXCERPT if same else QUOTED_STORY,
        same,
        named=same and named and not goes_on,
        position=where,
        continuity=continuity,
        reach=reach,
        dateline=another,
        adds_story=partial(extends, same),
    )


def _adds_story(small: Traits, large: Traits, allowance: int) -> bool:
    """Whether the larger text, holding the smaller, adds at least a sentence of the same
    story: ADDED_CHARS content characters or more, and after the start of the shared passage
    a story word that the added text brings: a word of the smaller found where the smaller
    does not have it, or a word of the shared text that the larger repeats and the smaller does
    not (one more occurrence), found in a part holding added text. A reprint's own lines add
    nothing of the kind: a headline or a source line goes before the story it holds (a word
    they bring is theirs), and an editor line or a promotion repeats none of the story's words
    (a promotion repeating its own words, a site's name, is no story). More text after that
    start than twice the ``allowance`` for a copy's own lines is the rest of the page's article
    (its later paragraphs, whatever they tell), more than any reprint adds of its own."""
    sketch, words = large.sketch, large.story_words
    if sketch.places is None or small.sketch.places is None or words is None or small.story_words is None:
        return False
    hashes, places = sketch.hashes, sketch.places.astype(np.int64)
    if len(small.sketch.hashes) < small.sketch.size:  # a sample: only hashes below its last one are known
        known = hashes <= small.sketch.hashes[-1]
        hashes, places = hashes[known], places[known]
    shared = _isin(hashes, small.sketch.hashes)
    if not shared.any():
        return False
    there = small.sketch.places.astype(np.int64)[np.searchsorted(small.sketch.hashes, hashes[shared])]
    start = places[shared][np.argsort(there, kind="stable")[:START_SHINGLES]].max()
    after = ~shared & (places >= start)
    estimate = after.sum() * large.chars / len(hashes)
    if max(estimate, large.chars - small.chars) < ADDED_CHARS:
        return False
    if min(estimate, large.chars - small.chars) > 2 * allowance:
        return True
    head = _bits(places[~shared & (places < start)] * BINS // 256)
    tail = _bits(places[after] * BINS // 256)
    sources = _sources(places[shared], there, tail)
    theirs = dict(zip(small.story_words.words.tolist(), small.story_words.spread.tolist()))
    for word, spread in zip(words.words.tolist(), words.spread.tolist()):
        if not spread & tail or spread & head:
            continue
        if word not in theirs:
            if spread & ~tail:  # also in the shared text: the addition repeats it
                return True
        elif any(not theirs[word] & sources[part] for part in range(BINS) if (spread & tail) >> part & 1):
            return True
    return False


def _sources(here: np.ndarray, there: np.ndarray, parts: int) -> dict[int, int]:
    """For each of the larger text's ``parts`` (a bit mask), the parts of the smaller text
    whose words its shared text may hold: those from the shared shingle before it to the one
    after it (``here``: their places in the larger, ``there``: in the smaller). A part of added
    text after the last shared shingle holds none; one that shared text ends in may hold the
    smaller's end."""
    order = np.argsort(here, kind="stable")
    here, there = here[order], there[order]
    found = {}
    for part in range(BINS):
        if not parts >> part & 1:
            continue
        first = int(np.searchsorted(here, part * 256 // BINS))
        last = int(np.searchsorted(here, (part + 1) * 256 // BINS))
        around = there[max(0, first - 1) : last + 1]
        if last == len(here) and first == last:
            found[part] = 0
            continue
        low = int(around.min()) * BINS // 256
        high = BINS - 1 if last == len(here) else int(around.max()) * BINS // 256
        found[part] = (1 << (high + 1)) - (1 << low)
    return found


def _names(small: Traits, large: Traits) -> bool:
    """Whether one text declares the other's headline as its original title (原标题)."""
    return bool(small.declared and small.declared == large.title) or bool(
        large.declared and large.declared == small.title
    )


def _headline(chars: int, allowance: int) -> int:
    """The parts (a bit mask) that start within a text's first ``allowance`` content characters:
    where its headline, byline and dateline stand."""
    return sum(1 << part for part in range(BINS) if part * chars <= allowance * BINS)


def _bits(parts: np.ndarray) -> int:
    """A bit mask of the parts given."""
    return sum(1 << int(part) for part in np.unique(parts))


def _held(small: Sketch, large: Sketch, estimate: float) -> float:
    """The share of the smaller text's shingles found in the larger, counted directly: of the
    smaller's sketch hashes below the larger's last one (those the larger's sketch would hold
    if its text had them), the share it holds. Exact for a text cut out of the other, where
    ``estimate`` (from Jaccard and the sizes) varies with the sample; ``estimate`` when fewer
    than HELD_SAMPLES such hashes."""
    hashes = small.hashes
    if len(large.hashes) < large.size:
        hashes = hashes[hashes <= large.hashes[-1]]
    if len(hashes) < HELD_SAMPLES:
        return estimate
    return float(_isin(hashes, large.hashes).mean())


def _words_agree(small: Traits, large: Traits, changed: int) -> bool:
    """Whether the smaller text's story words are the larger's (:func:`_agreement` at least
    AGREEMENT) and no figure changed between them."""
    agreement = _agreement(small.story_words, large.story_words) if changed == 0 else None
    return agreement is not None and agreement >= AGREEMENT


def _agreement(small: StoryWords | None, large: StoryWords | None) -> float | None:
    """Of the weight of the smaller text's story words, the share the larger text has among
    its own; None when the smaller text has fewer than AGREEMENT_WORDS of them."""
    if small is None or large is None or len(small.words) < AGREEMENT_WORDS:
        return None
    # On Python ints: a few dozen values, where numpy's calls cost many times the work. The
    # weights are IDF bytes over a power of two, so their sums are exact in any order and the
    # share of the bytes' sums is the share of the weights' (0/0 is NaN, as numpy's).
    theirs = set(large.words.tolist())
    idf = small.idf.tolist()
    total = sum(idf)
    if not total:
        return float("nan")
    return sum(value for word, value in zip(small.words.tolist(), idf) if word in theirs) / total


def _figures(small: Traits, large: Traits) -> tuple[int, int]:
    """(figures of ``small`` missing from ``large``, figures of ``small`` compared). Both keep
    the smallest figure hashes, so below the larger of their last kept hashes each knows
    exactly which figures it has."""
    if small.story_words is None or large.story_words is None:
        return 0, 0
    mine, theirs = small.story_words.figures.tolist(), large.story_words.figures.tolist()  # see _agreement
    limit = min(mine[-1] if len(mine) >= FIGURES else 1 << 32, theirs[-1] if len(theirs) >= FIGURES else 1 << 32)
    compared = [figure for figure in mine if figure <= limit]
    known = set(theirs)
    return sum(figure not in known for figure in compared), len(compared)


def _parts(small: Sketch, large: Sketch) -> tuple[int, int]:
    """Where the smaller text sits in the larger: bit masks over the larger text's BINS parts,
    of the parts most of whose sketch hashes the smaller holds (the shared passage) and of
    those it hardly holds (the larger text's own)."""
    if large.places is None or not len(large.hashes) or not len(small.hashes):
        return 0, 0
    hashes, parts = large.hashes, large.places.astype(np.int64) * BINS // 256
    if len(small.hashes) < small.size:  # a sample: only hashes below its last one are known
        known = hashes <= small.hashes[-1]
        hashes, parts = hashes[known], parts[known]
    shared = _isin(hashes, small.hashes)
    total = np.bincount(parts, minlength=BINS)
    held = np.bincount(parts, weights=shared, minlength=BINS) / np.maximum(total, 1)
    passage = sum(1 << i for i in range(BINS) if total[i] and held[i] >= PASSAGE_PART)
    own = sum(1 << i for i in range(BINS) if total[i] and held[i] <= OWN_PART)
    return passage, own


def _position(passage: int, own: int) -> str:
    """OPENING: the shared passage starts the larger text; SCATTERED: it lies in pieces with
    the larger text's own parts between them (paragraphs picked out of it); INSIDE: one piece
    with text of the larger's own before it."""
    pieces, inside, before = 0, False, False
    for part in range(BINS):
        if passage >> part & 1:
            pieces += not inside
            inside = True
        elif own >> part & 1:
            before = before or pieces == 0
            inside = False
    if pieces == 0:
        return INSIDE
    return SCATTERED if pieces > 1 else INSIDE if before else OPENING


def _reach(large: StoryWords | None, passage: int, own: int) -> float:
    """Of the larger text's own parts, the share holding a story word that also occurs in the
    shared passage: 1 when the rest of an article keeps to its lead, low when the rest is
    other stories (a roundup)."""
    if large is None or not own or not len(large.words):
        return 0.0
    spread = large.spread.astype(np.int64)
    linked = np.bitwise_or.reduce(spread[(spread & passage) != 0]) if (spread & passage).any() else 0
    return bin(int(linked) & own).count("1") / bin(own).count("1")


def _continuity(small: StoryWords | None, large: StoryWords | None, passage: int, own: int) -> float | None:
    """Whether the larger text's own parts tell the same story as the shared passage, both
    ways: of the weight of the larger text's story words in its own parts, the share also in
    the passage; of the weight of the smaller text's story words, the share the larger text
    repeats in its own parts. The geometric mean of the two; None when the larger text has no
    story word in its own parts (nothing to judge by)."""
    if small is None or large is None or not len(large.words) or not own:
        return None
    spread = large.spread.astype(np.int64)
    mine = (spread & own) != 0
    if not mine.any():
        return None
    weights = large.weights()
    forward = weights[mine & ((spread & passage) != 0)].sum() / weights[mine].sum()
    if not len(small.words):
        return 0.0
    repeated = _isin(small.words, np.sort(large.words[mine]))
    backward = small.weights()[repeated].sum() / small.weights().sum()
    return float(np.sqrt(forward * backward))


def _isin(values: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """Which of ``values`` are in ``ordered`` (sorted): :func:`numpy.isin` by binary search.
    The rule compares a few dozen hashes at a time, where ``np.isin``'s set-up costs many
    times the search."""
    if not len(ordered):
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(ordered, values)
    at[at == len(ordered)] = 0
    return ordered[at] == values


def same_text(a: Traits, b: Traits) -> bool:
    """The same text after normalisation (folding, notices left out): a page seen again. Any
    other change makes a re-crawled page an update, never a revisit to drop."""
    return bool(a.digest) and a.digest == b.digest and a.chars == b.chars


def what_changed(old_chars: int, new_chars: int, judgement: Judgement) -> str:
    """An updated page's change, in words for the log."""
    grown = new_chars - old_chars
    size = f"{abs(grown)} content characters {'added' if grown > 0 else 'removed'}" if grown else "the same length"
    story = "the same story" if judgement.same_story else "no longer the same story"
    return (
        f"text changed: {old_chars} -> {new_chars} content characters ({size}), "
        f"{100 * judgement.containment:.0f}% of the shorter text found in the other, Jaccard "
        f"{judgement.jaccard:.2f}: {story}"
    )
