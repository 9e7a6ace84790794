"""Verdicts: is this text a reprint of a stored one? First seen wins, unless a policy
(:mod:`.prefer`) says a later copy should take the stored copy's place.

Candidates come from three indexes (a shared nshash sentence, SimHash within k, a shared
smallest shingle hash of the sketch: MinHash-style, it survives edits that break every
long sentence); each is confirmed from the stored shingle sketch before a document is called a duplicate.
A false duplicate drops a unique article, so verification decides, never the index alone.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..fingerprints.fingerprint import Fingerprint, Fingerprinter, Recipe, sketch_keys_among
from ..fingerprints.passages import Passages
from ..fingerprints.simhash import hamming
from ..fingerprints.sketch import resemblance
from ..seconds import seconds
from ..stores import Probe, Reservation, Store
from ..stores.base import REPLACED, Confirm
from ..stores.record import COMMITTED, PENDING, DocRecord, clip_key
from .prefer import Copy, Policy, source_of
from .samestory import Judgement, judge, same_text, what_changed
from .verdicts import DUPLICATE, METHODS, MIN_SIMILARITY, REVISIT, SHORT, UNIQUE, Similar, Thresholds, Verdict

logger = logging.getLogger(__name__)

# A later story's copy is the record's match instead of the earliest story's when it resembles
# the record by this much more (Jaccard): a clearly closer copy, not noise of the estimate.
CLOSER = 0.2


# A verified match: the first stored copy, how it was found, and the rule's judgement.
Match = tuple[DocRecord, str, Judgement]


@dataclass
class _Outcome:
    """What checking found: the match, and with a policy the copy to replace, or the pending
    document to wait for."""

    match: Match | None
    replace: DocRecord | None = None
    waits_for: int | None = None
    recheck: bool = False
    revisit: bool = False  # the match is the document stored under the same key
    updated: bool = False  # the text replaces the one stored under its key (``replace``)
    collided: DocRecord | None = None  # another story stored under the same key, kept beside it


class Detector:
    """Fingerprints texts and checks them against a store, in arrival order."""

    def __init__(
        self,
        store: Store,
        thresholds: Thresholds | None = None,
        ttl: float | None = None,
        methods: tuple[str, ...] = METHODS,
        boilerplate_limit: int = 5,
        fingerprinter: Fingerprinter | None = None,
        clock: Callable[[], float] = time.time,
        prefer: Policy | None = None,
    ):
        unknown = set(methods) - set(METHODS)
        if unknown or not methods:
            raise ValueError(f"methods must be a non-empty subset of {METHODS}, got {methods}")
        if ttl is not None:
            try:
                ttl = seconds(ttl)
            except ValueError as exc:
                raise ValueError(f"ttl (None: no time window) {exc}") from None
        if boilerplate_limit < 2:
            raise ValueError(f"boilerplate_limit must be at least 2, got {boilerplate_limit}")
        self.store = store
        self.recipe: Recipe = store.recipe
        self.fingerprinter = fingerprinter or Fingerprinter(self.recipe)
        self.thresholds = thresholds or Thresholds()
        self.ttl = ttl
        self.methods = methods
        self.boilerplate_limit = boilerplate_limit
        self.clock = clock
        self.prefer = prefer  # None: first seen wins
        self._policy_failed = False

    def fingerprint(self, text: str, title: str | None = None) -> Fingerprint:
        return self.fingerprinter.fingerprint(text, title)

    def check(self, key: str, text: str, reserve: bool = False, source: str = "", title: str | None = None) -> Verdict:
        """Judge ``text`` and store it if it is a new story.

        With ``reserve`` the document is stored as pending until :meth:`commit`; a pending
        document already catches its own copies, and :meth:`release` takes it out again.
        ``source`` names the site for a ``source`` policy (default: the key's host); ``title`` is
        the text's headline (a lead excerpt may declare it as its original title).
        """
        return self.check_fingerprint(key, self.fingerprint(text, title), reserve, source)

    def check_fingerprint(
        self,
        key: str,
        fp: Fingerprint,
        reserve: bool = False,
        source: str = "",
        text: str | None = None,
        force: bool = False,
    ) -> Verdict:
        """:meth:`check` of a fingerprint. A copy that the policy prefers replaces the stored
        copy (at once, or with :meth:`commit` when reserved); when another copy's
        replacement took the story first, the copy is judged again, three times at most. With
        ``text``, a stored copy is stored with its text (kept beside the record: ``Store.texts``).
        With ``force``, a duplicate is filed all the same, as a story of its own
        (``relative_of`` names the copy it matched): a person decided it is not a reprint. The
        text already stored under the same key (a revisit) is still not filed twice."""
        if fp.chars < self.thresholds.min_chars:
            return Verdict(key, SHORT, chars=fp.chars)
        for _ in range(3):
            record, probe, now = self._ask(key, fp, reserve, source)
            record.text = text
            decided: list[_Outcome] = []  # once a single-process store asked before filing

            def confirm(candidates: list[DocRecord]) -> bool:  # called by check_and_add below, in this round
                decided.append(self._decide(record, probe, candidates, now))  # noqa: B023
                return _refused(decided[0], force)  # noqa: B023

            reservation = self.store.check_and_add(probe, record, confirm)
            # A store that filed as it read (Redis): verify now.
            outcome = decided[0] if decided else self._decide(record, probe, reservation.candidates, now)
            if outcome.replace is None:
                if _refused(outcome, force) and reservation.doc_id:
                    self.store.remove(reservation.doc_id)
                if outcome.match is not None and not _refused(outcome, force):
                    return self._forced(key, fp, reservation, outcome.match)
                return self._verdict(key, fp, reservation, outcome)
            held = self.store.replace(record, outcome.replace)
            if held == REPLACED:
                return self._verdict(key, fp, reservation, outcome)
            self.store.remove(reservation.doc_id)  # another copy took the story first
        # Still losing: a duplicate of the copy it matched, waiting for the one holding it.
        return self._verdict(key, fp, Reservation(0, []), _Outcome(outcome.match, waits_for=held if held > 0 else None))

    def check_many(
        self,
        documents: list[tuple[str, Fingerprint]],
        reserve: bool = False,
        sources: list[str] | None = None,
        texts: list[str | None] | None = None,
    ) -> list[Verdict]:
        """Verdicts of several documents in arrival order, as :meth:`check_fingerprint` of
        each in turn would give them.

        A store that files as it reads (Redis) takes them in one round trip, and takes their
        duplicates out with its next call (with the next batch, in the same round trip). Each
        document's candidates then include the documents of the batch before it, those found
        duplicates too: verification skips those, as they would have been removed. One
        difference remains: the documents of the batch before a document do not count toward
        the boilerplate limit of its sentences (undecided when filed, any may be a copy on its
        way out), so near that limit a sentence can stay a key a few documents longer
        (candidates change, verification does not). Other stores check one by one. ``reserve`` files new stories as pending, as :meth:`check` does.
        """
        return self.start_many(documents, reserve=reserve, sources=sources, texts=texts)()

    def start_many(
        self,
        documents: list[tuple[str, Fingerprint]],
        passages: list[Passages] | None = None,
        *,
        reserve: bool = False,
        sources: list[str] | None = None,
        texts: list[str | None] | None = None,
    ) -> Callable[[], list[Verdict]]:
        """:meth:`check_many` in two steps: hand the batch to the store, and (calling the
        function returned) read the store's answer and verify. A server store (Redis) works on
        the batch in between, while the caller fingerprints the next one. Nothing else may
        check documents in between: the next batch is started after this one's verdicts.
        With ``passages`` (each document's, :func:`.passages.passages_of`), each verdict lists
        its related stories (:meth:`add_related`); ``sources``, each document's site (for a
        ``source`` policy); ``texts``, the texts to keep with the copies stored.
        """
        sources = sources or [""] * len(documents)
        kept: list[str | None] = list(texts) if texts is not None else [None] * len(documents)
        if not self.store.files_before_verifying:
            verdicts = [
                self.check_fingerprint(key, fp, reserve, source, text)
                for (key, fp), source, text in zip(documents, sources, kept)
            ]
            if passages is not None:
                self.add_related(verdicts, passages)
            return lambda: verdicts
        shown: list[Verdict | None] = [None] * len(documents)
        asked = []
        for index, (key, fp) in enumerate(documents):
            if fp.chars < self.thresholds.min_chars:
                shown[index] = Verdict(key, SHORT, chars=fp.chars)
            else:
                asked.append((index, *self._ask(key, fp, reserve, sources[index])))
                asked[-1][1].text = kept[index]
        if self.store.confirms_in_batches:
            return self._start_confirmed(documents, passages, asked, shown, reserve, sources, kept)
        receive = self.store.start_check_and_add_many([a[2] for a in asked], [a[1] for a in asked])

        def finish() -> list[Verdict]:
            verdicts = list(shown)
            removed: set[int] = set()  # duplicates of the batch, taken out with the next call
            sent: set[int] = set()  # of those, taken out already
            gone: set[int] = set()  # copies replaced by a document of the batch
            taken: dict[int, DocRecord] = {}  # document of the batch -> as it replaced a copy
            for (index, record, probe, now), reservation in zip(asked, receive()):
                candidates = [taken.get(c.doc_id, c) for c in reservation.candidates if c.doc_id not in removed | gone]
                outcome = self._decide(record, probe, candidates, now)
                key, fp = documents[index]
                if outcome.replace is not None:
                    if self.store.replace(record, outcome.replace) == REPLACED:
                        gone.add(outcome.replace.doc_id)
                        taken[record.doc_id] = record
                    else:  # another process's copy took the story first: judge it alone
                        self.store.remove_many(sorted(removed - sent) + [record.doc_id])
                        sent |= removed
                        verdicts[index] = self.check_fingerprint(key, fp, reserve, sources[index], kept[index])
                        continue
                elif outcome.match is not None and reservation.doc_id:
                    removed.add(reservation.doc_id)
                verdicts[index] = self._verdict(key, fp, reservation, outcome)
            self.store.remove_later(sorted(removed - sent))
            if passages is not None:
                self.add_related(verdicts, passages, removed | gone)  # type: ignore[arg-type]
            return verdicts  # type: ignore[return-value]

        return finish

    def _start_confirmed(
        self,
        documents: list[tuple[str, Fingerprint]],
        passages: list[Passages] | None,
        asked: list[tuple[int, DocRecord, Probe, float]],
        shown: list[Verdict | None],
        reserve: bool,
        sources: list[str],
        kept: list[str | None],
    ) -> Callable[[], list[Verdict]]:
        """:meth:`start_many` on a store that confirms each document of a batch as soon as its
        candidates are known (``Store.confirms_in_batches``): as :meth:`check_fingerprint`
        does for one document, a duplicate is never kept and a copy that another process's
        copy beat to a replacement is judged again alone."""
        decided: dict[int, _Outcome] = {}
        # A document of the batch that is to replace a copy stands for it from then on, as the
        # store's replace (made after the whole batch is confirmed) will have it.
        gone: set[int] = set()
        taken: dict[int, DocRecord] = {}

        def confirm_of(index: int, record: DocRecord, probe: Probe, now: float) -> Confirm:
            def confirm(candidates: list[DocRecord]) -> bool:
                candidates = [taken.get(c.doc_id, c) for c in candidates if c.doc_id not in gone]
                decided[index] = outcome = self._decide(record, probe, candidates, now)
                if outcome.replace is not None:
                    gone.add(outcome.replace.doc_id)
                    taken[record.doc_id] = dataclasses.replace(
                        record, story=outcome.replace.story_id, replaces=outcome.replace.doc_id
                    )
                return _refused(outcome, False)

            return confirm

        confirms = [confirm_of(*a) for a in asked]
        receive = self.store.start_check_and_add_many([a[2] for a in asked], [a[1] for a in asked], confirms)

        def finish() -> list[Verdict]:
            verdicts = list(shown)
            replaced: set[int] = set()  # copies the store replaced
            for (index, record, _, _), reservation in zip(asked, receive()):
                key, fp = documents[index]
                outcome = decided[index]
                if outcome.replace is not None:
                    if self.store.replace(record, outcome.replace) != REPLACED:
                        self.store.remove(reservation.doc_id)  # another copy took the story first
                        verdicts[index] = self.check_fingerprint(key, fp, reserve, sources[index], kept[index])
                        continue
                    replaced.add(outcome.replace.doc_id)
                verdicts[index] = self._verdict(key, fp, reservation, outcome)
            if passages is not None:
                self.add_related(verdicts, passages, replaced)  # type: ignore[arg-type]
            return verdicts  # type: ignore[return-value]

        return finish

    def add_related(self, verdicts: list[Verdict], passages: list[Passages], gone: Iterable[int] = ()) -> None:
        """Set each judged verdict's ``related``: the stored stories, other than its own,
        filed under one of its passages (one shared long passage: a quote, one event told
        from another side), with the passages shared, most shared first.

        Read after the verdicts of ``verdicts`` (one read of the store, changing nothing), so
        stories filed by a document of the batch at or after this one are left out, as are
        ``gone`` (duplicates the store has yet to take out). Sentences filed by
        boilerplate_limit stories are boilerplate here too, counted after the whole batch was
        filed. Verdicts are not changed.
        """
        judged = [i for i, verdict in enumerate(verdicts) if verdict.status != SHORT]
        later = set(gone)
        skips: dict[int, set[int]] = {}
        for i in reversed(range(len(verdicts))):
            verdict = verdicts[i]
            if verdict.stored and verdict.doc_id:
                later.add(verdict.doc_id)
            skips[i] = later | {verdict.similar_id}  # type: ignore[arg-type]
        found = self.related(
            [passages[i] for i in judged], [skips[i] for i in judged], [verdicts[i].key for i in judged]
        )
        for i, related in zip(judged, found):
            verdicts[i].related = related

    def related(self, passages: list[Passages], skips: list[set[int]], keys: list[str | None]) -> list[list[dict]]:
        """For each text's passages, the stored stories filed under one of them, but those in
        its ``skips`` (ids) and its own key: ``{"key", "shared": [passage, ...]}``, most shared
        first. One read of the store, changing nothing."""
        probes = [Probe(p.keys, [], boilerplate_limit=self.boilerplate_limit) for p in passages]
        not_before = self.clock() - self.ttl if self.ttl else float("-inf")
        answers = []
        for own, skip, key, candidates in zip(passages, skips, keys, self.store.find_candidates(probes)):
            shown = []
            for other in candidates:
                if (
                    other.doc_id in skip
                    or other.story_id in skip
                    or other.time < not_before
                    or (key is not None and other.key == clip_key(key))
                ):
                    continue
                filed = set(other.sentence_keys)
                shared = [own.show(k) for k in own.keys if k in filed]
                if shared:
                    shown.append((-len(shared), other.doc_id, {"key": other.key, "shared": shared}))
            answers.append([entry for *_, entry in sorted(shown, key=lambda s: s[:2])])
        return answers

    def query(
        self, text: str, k: int = 10, min_similarity: float = MIN_SIMILARITY, key: str | None = None
    ) -> list[Similar]:
        """The stored documents ``text`` resembles, best first, without storing anything.

        ``duplicate`` marks the document :meth:`check` would name as the first copy (the
        same rule on the same candidates; none when that document has ``key``, the text's
        own: the same document seen again); the others are listed when their similarity is
        at least ``min_similarity``, the ``k`` most similar. A text too short to judge has none.
        """
        return self.query_many([self.fingerprint(text)], k, min_similarity, [key])[0]

    def query_many(
        self,
        fingerprints: list[Fingerprint],
        k: int = 10,
        min_similarity: float = MIN_SIMILARITY,
        keys: list[str | None] | None = None,
    ) -> list[list[Similar]]:
        """:meth:`query` of several fingerprints, with one read of the store (one round trip)."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if not 0.0 <= min_similarity <= 1.0:
            raise ValueError(f"min_similarity must be in [0, 1], got {min_similarity}")
        keys = keys or [None] * len(fingerprints)
        asked = [
            (index, *self._ask(keys[index] or "", fp, False))
            for index, fp in enumerate(fingerprints)
            if fp.chars >= self.thresholds.min_chars
        ]
        found = self.store.find_candidates([probe for _, _, probe, _ in asked])
        answers: list[list[Similar]] = [[] for _ in fingerprints]
        for (index, record, probe, now), candidates in zip(asked, found):
            answers[index] = self._ranked(record, probe, candidates, now, k, min_similarity)
        return answers

    def _ranked(
        self, record: DocRecord, probe: Probe, candidates: list[DocRecord], now: float, k: int, floor: float
    ) -> list[Similar]:
        judged: dict[int, Judgement] = {}
        match = self._best_match(record, probe, candidates, now, judged)
        first = match[0].doc_id if match is not None and match[0].key != record.key else None
        not_before = now - self.ttl if self.ttl else float("-inf")
        listed = []
        for other in candidates:
            if other.time < not_before:
                continue
            judgement = judged.get(other.doc_id)  # its resemblance taken already
            if judgement is not None:
                jaccard, containment = judgement.jaccard, judgement.containment
            else:
                jaccard, containment = resemblance(record.sketch, other.sketch)
            if containment >= floor or other.doc_id == first:
                similar = Similar(
                    other.key, round(containment, 4), round(jaccard, 4), other.doc_id == first, other.story_id
                )
                listed.append(similar)
        listed.sort(key=lambda s: (-s.similarity, -s.jaccard, s.similar_id))
        return listed[:k]

    def _ask(self, key: str, fp: Fingerprint, reserve: bool, source: str = "") -> tuple[DocRecord, Probe, float]:
        """The record to file and the buckets to read for one document."""
        now = self.clock()
        record = DocRecord(
            doc_id=0,
            key=clip_key(key),
            time=now,
            simhash=fp.simhash,
            sketch=fp.sketch,
            chars=fp.chars,
            state=PENDING if reserve else COMMITTED,
            source=source if self.prefer is not None else "",
            story_words=fp.story_words,
            digest=fp.digest,
            title=fp.title,
            declared=fp.declared,
        )
        sketch_keys = self.thresholds.sketch_keys(fp, self.recipe) if "sketch" in self.methods else []
        probe = Probe(
            # Sketch keys go first so that all of them are filed, then the n longest sentences.
            sentence_keys=sketch_keys + (fp.sentence_keys if "nshash" in self.methods else []),
            simhash_buckets=self.store.tables.keys(fp.simhash) if "simhash" in self.methods else [],
            nshash_n=self.recipe.nshash_n + len(sketch_keys),
            boilerplate_limit=self.boilerplate_limit,
        )
        return record, probe, now

    def _verdict(self, key: str, fp: Fingerprint, reservation: Reservation, outcome: _Outcome) -> Verdict:
        match = outcome.match
        # A new text under a stored key: an update takes the old text's place (and story id);
        # another story (a key collision) is a story of its own beside it.
        under_key = outcome.replace if outcome.updated else outcome.collided
        if under_key is not None:
            judgement = judge(fp, under_key, self.thresholds)
            return Verdict(
                key,
                UNIQUE,
                reservation.doc_id,
                under_key.story_id if outcome.updated else reservation.doc_id,
                jaccard=round(judgement.jaccard, 4),
                containment=round(judgement.containment, 4),
                chars=fp.chars,
                stored=True,
                updated=outcome.updated,
                change=what_changed(under_key.chars, fp.chars, judgement),
                key_collision=outcome.collided is not None,
            )
        if match is None:
            return Verdict(key, UNIQUE, reservation.doc_id, reservation.doc_id, chars=fp.chars, stored=True)
        first, method, judgement = match
        jaccard, containment = judgement.jaccard, judgement.containment
        if outcome.revisit:
            # The same document seen again (a re-crawled URL, a resumed batch): not a reprint.
            return Verdict(
                key,
                REVISIT,
                None,
                first.story_id,
                method=method,
                jaccard=round(jaccard, 4),
                containment=round(containment, 4),
                distance=hamming(fp.simhash, first.simhash),
                chars=fp.chars,
            )
        shown: dict[str, Any] = {
            "method": method,
            "jaccard": round(jaccard, 4),
            "containment": round(containment, 4),
            "distance": hamming(fp.simhash, first.simhash),
            "chars": fp.chars,
        }
        if outcome.replace is not None:  # replaced: the story's first copy from now on
            return Verdict(key, UNIQUE, reservation.doc_id, first.story_id, stored=True, replaces=first.key, **shown)
        return Verdict(
            key,
            DUPLICATE,
            doc_id=None,
            similar_id=first.story_id,
            duplicate_of=first.key,
            waits_for=outcome.waits_for or first.doc_id,
            recheck=outcome.recheck,
            **shown,
        )

    def _forced(self, key: str, fp: Fingerprint, reservation: Reservation, match: Match) -> Verdict:
        """A duplicate filed with ``force``: a story of its own, related to the copy it matched."""
        first, method, judgement = match
        jaccard, containment = judgement.jaccard, judgement.containment
        return Verdict(
            key,
            UNIQUE,
            reservation.doc_id,
            reservation.doc_id,
            method=method,
            jaccard=round(jaccard, 4),
            containment=round(containment, 4),
            distance=hamming(fp.simhash, first.simhash),
            chars=fp.chars,
            stored=True,
            relative_of=first.key,
        )

    def _decide(self, record: DocRecord, probe: Probe, candidates: list[DocRecord], now: float) -> _Outcome:
        """The best match and, with a policy, whether the new copy takes its place.

        A copy can replace only a committed copy that no other copy is replacing: a copy of a
        pending document (a new story, or a replacement, still passing later pipelines) waits
        for its outcome and is judged again if the pending one is committed and may not be
        the last word (the new copy may beat it, or it replaced the copy matched).
        """
        under_key = self._stored_under_key(record, candidates, now)
        seen = next((other for other in under_key if same_text(record, other)), None)
        if seen is not None:
            return _Outcome((seen, "key", judge(record, seen, self.thresholds)), revisit=True)
        match = self._best_match(record, probe, [c for c in candidates if c.key != record.key], now)
        if match is None and under_key:
            return self._under_stored_key(record, under_key)
        if match is None or self.prefer is None:
            return _Outcome(match)
        first = match[0]
        if first.state == PENDING:
            return _Outcome(match, waits_for=first.doc_id, recheck=self._wins(record, first, match[2]))
        for other in candidates:
            if other.replaces == first.doc_id and other.state == PENDING and other.doc_id != record.doc_id:
                return _Outcome(match, waits_for=other.doc_id, recheck=True)
        if self._wins(record, first, match[2]):
            return _Outcome(match, replace=first)
        return _Outcome(match)

    def _stored_under_key(self, record: DocRecord, candidates: list[DocRecord], now: float) -> list[DocRecord]:
        """The documents stored under the record's own key (within the time window), latest
        first: one, or several stories after a key collision."""
        if not record.key:
            return []
        not_before = now - self.ttl if self.ttl else float("-inf")
        same = [
            other
            for other in candidates
            if other.key == record.key and other.doc_id != record.doc_id and other.time >= not_before
        ]
        return sorted(same, key=lambda other: -other.doc_id)

    def _under_stored_key(self, record: DocRecord, under_key: list[DocRecord]) -> _Outcome:
        """A new text under a key the store holds, matching no other key's story: an update of
        the document whose story it still tells (by the one-story rule: a sentence added, a
        figure corrected, a new headline), which it replaces; otherwise a key collision (two
        sources numbering their items alike): another story, filed beside the stored ones,
        which are kept, so that copies of either are still caught."""
        for previous in under_key:
            if judge(record, previous, self.thresholds).same_story:
                return _Outcome(None, replace=previous, updated=True)
        return _Outcome(None, collided=under_key[0])

    def _wins(self, record: DocRecord, stored: DocRecord, judgement: Judgement) -> bool:
        """The policy's answer; a policy that fails keeps the stored copy (said once).
        ``judgement`` (the pair's, new copy first) says which copy extends the other."""
        new_extends = judgement.extends and judgement.larger == 0
        old_extends = judgement.extends and judgement.larger == 1
        new = Copy(record.key, record.chars, source_of(record.key, record.source), new_extends)
        old = Copy(stored.key, stored.chars, source_of(stored.key, stored.source), old_extends)
        try:
            return bool(self.prefer(new, old))  # type: ignore[misc]
        except Exception as exc:
            if not self._policy_failed:
                self._policy_failed = True
                logger.error("NEARDUP_PREFER policy %r failed (%r); the stored copies are kept", self.prefer, exc)
            return False

    def _best_match(
        self,
        record: DocRecord,
        probe: Probe,
        candidates: list[DocRecord],
        now: float,
        judged: dict[int, Judgement] | None = None,
    ) -> Match | None:
        """The stored story's document that the rule confirms one story with the record, with
        how it matched: the earliest story's (within a story, a replacing copy first), unless
        a later story holds a clearly closer copy (:meth:`_closest`). ``judged`` collects the
        rule's judgement of each candidate judged, by id."""
        if not candidates:
            return None  # most new stories: no need for the key sets below
        not_before = now - self.ttl if self.ttl else float("-inf")
        own_sentences, own_sketches = _own_keys(probe)
        confirmed: list[Match] = []
        # Stories in the order they were first seen; within one, the copy holding it first:
        # the latest that replaced another, else the first copy (a copy of a shared store
        # stamped with the story but still claiming its place comes after both).
        for other in sorted(candidates, key=_holder_first):
            if other.doc_id == record.doc_id or other.time < not_before:
                continue
            methods = []
            if not own_sentences.isdisjoint(other.sentence_keys):
                methods.append("nshash")
            if not own_sketches.isdisjoint(other.sentence_keys):
                methods.append("sketch")
            if "simhash" in self.methods and hamming(record.simhash, other.simhash) <= self.recipe.simhash_k:
                methods.append("simhash")
            if not methods:
                continue  # shares a SimHash table key but is farther than k: not a candidate
            judgement = judge(record, other, self.thresholds)
            if judged is not None:
                judged[other.doc_id] = judgement
            if judgement.same_story:
                confirmed.append((other, "+".join(methods), judgement))
                if confirmed[0][2].jaccard >= 1.0 - CLOSER:
                    break  # a near copy already: no other can be closer by CLOSER
        return self._closest(confirmed) if confirmed else None

    def _closest(self, confirmed: list[Match]) -> Match:
        """Of the confirmed matches (earliest story first), the earliest story's, or a later
        story's whose copy resembles the record by CLOSER more (Jaccard): a reprint of a
        source stored apart from its portal's excerpt (the rule found them two stories) is a
        copy of the source, not of the excerpt it also holds. A later story one story with an
        earlier one's copy is never taken: it is a copy not yet verified (on a shared store,
        another process files its copy before it verifies it) that will join or replace that
        earlier story."""
        first = confirmed[0]
        best = max(confirmed, key=lambda match: match[2].jaccard)
        if best[0].story_id == first[0].story_id or best[2].jaccard < first[2].jaccard + CLOSER:
            return first
        earlier = [match[0] for match in confirmed if match[0].story_id < best[0].story_id]
        if any(judge(best[0], other, self.thresholds).same_story for other in earlier):
            return first
        return next(match for match in confirmed if match[0].story_id == best[0].story_id)

    def commit(self, verdict: Verdict) -> None:
        """Make a reserved unique document permanent (its item was stored)."""
        if verdict.stored and verdict.doc_id is not None:
            self.store.commit(verdict.doc_id)

    def release(self, verdict: Verdict) -> None:
        """Take a reserved unique document out again (its item was dropped or failed)."""
        if verdict.stored and verdict.doc_id is not None:
            self.store.remove(verdict.doc_id)

    def purge(self, background: bool = False) -> int:
        """Remove documents older than the time window; 0 when there is no window.
        ``background``: it runs in a thread beside checks, on a store that can
        (``purges_in_background``), which then leaves them most of the process's time."""
        if not self.ttl:
            return 0
        if background and self.store.purges_in_background:
            return self.store.purge(self.clock() - self.ttl, background=True)  # type: ignore[call-arg]
        return self.store.purge(self.clock() - self.ttl)


def _holder_first(record: DocRecord) -> tuple[int, int, int]:
    """Sort key: by story, then the copies that replaced another (latest first), the story's
    first copy, and last the copies that hold no place of the story."""
    rank = 0 if record.replaces else 1 if record.doc_id == record.story_id else 2
    return record.story_id, rank, -record.doc_id


def _refused(outcome: _Outcome, force: bool) -> bool:
    """Whether a checked text is not filed: a duplicate (unless ``force``) or a revisit."""
    matched = outcome.match is not None and outcome.replace is None
    return matched and (outcome.revisit or not force)


def _own_keys(probe: Probe) -> tuple[set[int], set[int]]:
    """A document's sentence keys and sketch keys, apart: a candidate's method is two set tests."""
    sketches = sketch_keys_among(probe.sentence_keys)
    return set(probe.sentence_keys) - sketches, sketches
