"""The entry-time check: what a knowledge base or a script library asks before writing an entry.

One object over one store and the engine: check a text (read only), add an entry (the engine's
atomic check-and-add, so two editors adding copies of one entry at once keep one), read and
delete entries by key, count them. Each similar entry comes with the passages it shares with
the text, found by the review pages' marking (:func:`..review.marking.align_each`) and given as character
ranges of both texts. No HTTP here: the front end (:mod:`.http`) turns answers and
:class:`EntryError` into responses.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..engine.detector import Detector
from ..engine.verdicts import DUPLICATE, REVISIT, Similar, Verdict
from ..fingerprints.extract import ExtractionError, html_to_text
from ..fingerprints.fingerprint import Fingerprint
from ..review.marking import FoldedTexts, align_each
from ..stores import Store, StoreError, StoreUnavailable, redact
from ..stores.record import DocRecord, clip_key

MAX_LISTED = 50  # similar entries listed at most, whatever "limit" asks


class EntryError(Exception):
    """A request that cannot be answered as asked: an HTTP status and a message for a person."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Counts:
    """What the service did since it started (``GET /stats``)."""

    checks: int = 0
    added: int = 0
    forced: int = 0  # added with "force" though similar to a stored entry
    refused: int = 0  # not added: a duplicate of a stored entry
    revisits: int = 0  # the text already stored under its key: nothing written
    updated: int = 0  # a new text under a stored key replaced it
    key_collisions: int = 0  # another story under a stored key: added beside it
    deleted: int = 0
    started: float = field(default_factory=time.time)


class Entries:
    """Check, add, read and delete the entries of one store namespace."""

    def __init__(self, detector: Detector):
        self.detector = detector
        self.store: Store = detector.store
        self.counts = Counts()
        self.folded = FoldedTexts()  # the stored texts last listed, ready to be marked again

    # -- requests -------------------------------------------------------------------------

    def check(self, body: Any, fingerprint: Fingerprint | None = None) -> dict:
        """The verdict on a text and the stored entries it resembles; nothing is written.
        ``fingerprint``: the text's, made beforehand (:meth:`fingerprint_input`)."""
        text, extracted = _text_of(body)
        key = _optional_key(body)
        limit = _limit_of(body)
        answer = self._similar(text, key, limit, _title_of(body), fingerprint)
        self.counts.checks += 1
        if extracted:
            answer["text"] = text  # the ranges are ranges of the extracted text
        return answer

    def add(self, body: Any) -> tuple[int, dict]:
        """Check and add in one step: (HTTP status, answer). 201: stored; 200: the same text
        was stored under this key already; 409: a duplicate, not stored (unless "force")."""
        key = _required_key(body)
        text, extracted = _text_of(body)
        force = body.get("force", False)
        if not isinstance(force, bool):
            raise EntryError(400, '"force" must be true or false')
        fingerprint = self.detector.fingerprint(text, _title_of(body))
        if fingerprint.chars < self.detector.thresholds.min_chars:
            raise EntryError(400, _too_short(fingerprint.chars, self.detector.thresholds.min_chars))
        listed = self._listed(text, fingerprint, key, _limit_of(body))
        verdict = self._guarded(lambda: self.detector.check_fingerprint(key, fingerprint, text=text, force=force))
        answer = {"key": key, "added": verdict.stored, **_verdict_fields(verdict), "similar": listed}
        if extracted:
            answer["text"] = text
        if verdict.status == DUPLICATE:
            self.counts.refused += 1
            return 409, answer
        if verdict.status == REVISIT:
            self.counts.revisits += 1
            return 200, answer
        self.counts.added += 1
        self.counts.forced += verdict.relative_of is not None
        self.counts.updated += verdict.updated
        self.counts.key_collisions += verdict.key_collision
        return 201, answer

    @staticmethod
    def fingerprint_input(body: Any) -> tuple[str, str | None] | None:
        """The text and title of a valid check of a "text", whose fingerprint can be made
        before the check; None for any other (the check extracts the HTML, or finds the error)."""
        if not isinstance(body, dict) or "html" in body:
            return None
        try:
            text, _ = _text_of(body)
            _optional_key(body), _limit_of(body)
            return text, _title_of(body)
        except EntryError:
            return None

    def get(self, key: str) -> dict:
        """The entry stored under ``key`` (its latest text), or 404."""
        records = self._guarded(lambda: self.store.stored_under(clip_key(key)))
        if not records:
            raise EntryError(404, f"no entry is stored under the key {key!r}")
        latest = records[-1]
        text = self._guarded(lambda: self.store.texts([latest.doc_id])).get(latest.doc_id)
        return _entry(latest, text)

    def delete(self, key: str) -> dict:
        """Remove what is stored under ``key``, or 404."""
        records = self._guarded(lambda: self.store.stored_under(clip_key(key)))
        if not records:
            raise EntryError(404, f"no entry is stored under the key {key!r}")
        self._guarded(lambda: self.store.remove_many([record.doc_id for record in records]))
        self.counts.deleted += 1
        return {"key": key, "deleted": True}

    def stats(self) -> dict:
        counts = self.counts
        thresholds = self.detector.thresholds
        return {
            "entries": self._guarded(self.store.count),
            "store": redact(self.store.uri),
            "namespace": self.store.namespace,
            "min_chars": thresholds.min_chars,
            "uptime_seconds": round(time.time() - counts.started, 1),
            "requests": {name: getattr(counts, name) for name in counts.__dataclass_fields__ if name != "started"},
        }

    def health(self) -> dict:
        """One read of the store (a record that never exists): fails with 503 when it is down."""
        self._guarded(lambda: self.store.get(0))
        return {"status": "ok"}

    def close(self) -> None:
        self.store.close()

    # -- the parts ------------------------------------------------------------------------

    def _similar(
        self, text: str, key: str | None, limit: int, title: str | None = None, fingerprint: Fingerprint | None = None
    ) -> dict:
        if fingerprint is None:
            fingerprint = self.detector.fingerprint(text, title)
        min_chars = self.detector.thresholds.min_chars
        if fingerprint.chars < min_chars:
            return {
                "verdict": "short",
                "chars": fingerprint.chars,
                "min_chars": min_chars,
                "message": _too_short(fingerprint.chars, min_chars),
                "duplicate_of": None,
                "similar": [],
            }
        listed = self._listed(text, fingerprint, key, limit)
        duplicate = next((entry["key"] for entry in listed if entry["duplicate"]), None)
        verdict = "duplicate" if duplicate else "similar" if listed else "unique"
        return {"verdict": verdict, "chars": fingerprint.chars, "duplicate_of": duplicate, "similar": listed}

    def _listed(self, text: str, fingerprint: Any, key: str | None, limit: int) -> list[dict]:
        """The similar entries, best first, each with its text and the passages shared."""
        found: list[Similar] = self._guarded(lambda: self.detector.query_many([fingerprint], limit, keys=[key])[0])
        records = {}
        for similar in found:
            under = self._guarded(lambda key=similar.key: self.store.stored_under(key))
            chosen = [r for r in under if r.story_id == similar.similar_id] or under
            if chosen:
                records[similar.key] = chosen[-1]
        texts = self._guarded(lambda: self.store.texts([record.doc_id for record in records.values()]))
        stored = [texts.get(records[s.key].doc_id) if s.key in records else None for s in found]
        alignments = iter(align_each(text, [t for t in stored if t is not None], kept=self.folded))
        listed = []
        for similar, entry_text in zip(found, stored):
            alignment = next(alignments) if entry_text is not None else None
            listed.append(
                {
                    "key": similar.key,
                    "similarity": similar.similarity,
                    "jaccard": similar.jaccard,
                    "duplicate": similar.duplicate,
                    "similar_id": similar.similar_id,
                    "text": entry_text,
                    "passages": [{"text": list(a), "entry": list(b)} for a, b in alignment.pairs] if alignment else [],
                    "shared_chars": alignment.shared if alignment else 0,
                }
            )
        return listed

    def _guarded(self, call: Any) -> Any:
        """A store call; a store that is down or failing becomes a 503 with its message."""
        try:
            return call()
        except (StoreUnavailable, StoreError) as exc:
            raise EntryError(503, f"the store is unavailable: {exc}") from exc


def _verdict_fields(verdict: Verdict) -> dict:
    status = "unique" if verdict.status not in (DUPLICATE, REVISIT) else verdict.status
    return {
        "verdict": status,
        "duplicate_of": verdict.duplicate_of,
        "relative_of": verdict.relative_of,
        "updated": verdict.updated,
        "key_collision": verdict.key_collision,
        "similar_id": verdict.similar_id,
        "chars": verdict.chars,
    }


def _entry(record: DocRecord, text: str | None) -> dict:
    return {
        "key": record.key,
        "similar_id": record.story_id,
        "added": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.time)),
        "chars": record.chars,
        "text": text,
    }


def _too_short(chars: int, min_chars: int) -> str:
    return f"the text is too short to judge: {chars} letters or digits, at least {min_chars} needed"


def _text_of(body: Any) -> tuple[str, bool]:
    """The text of a request: "text", or the article extracted from "html" (True then)."""
    if not isinstance(body, dict):
        raise EntryError(400, 'the request body must be a JSON object, e.g. {"text": "..."}')
    if "text" in body and "html" in body:
        raise EntryError(400, 'give "text" or "html", not both')
    if "text" in body:
        if not isinstance(body["text"], str):
            raise EntryError(400, '"text" must be a string')
        return body["text"], False
    if "html" in body:
        if not isinstance(body["html"], str):
            raise EntryError(400, '"html" must be a string')
        try:
            return html_to_text(body["html"]), True
        except ExtractionError as exc:
            raise EntryError(400, f"no text could be extracted from the HTML: {exc}") from exc
    raise EntryError(400, 'the request needs a "text" (or "html") field')


def _title_of(body: Any) -> str | None:
    """The optional "title": the entry's headline, which a lead excerpt may declare (原标题)."""
    title = body.get("title") if isinstance(body, dict) else None
    if title is not None and not isinstance(title, str):
        raise EntryError(400, '"title" must be a string')
    return title


def _required_key(body: Any) -> str:
    key = _optional_key(body)
    if key is None:
        raise EntryError(400, 'the request needs a "key" field: the entry\'s id, a non-empty string')
    return key


def _optional_key(body: Any) -> str | None:
    if not isinstance(body, dict) or body.get("key") is None:
        return None
    key = body["key"]
    if not isinstance(key, str) or not key.strip():
        raise EntryError(400, '"key" must be a non-empty string')
    return key


def _limit_of(body: Any) -> int:
    limit = body.get("limit", 10) if isinstance(body, dict) else 10
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LISTED:
        raise EntryError(400, f'"limit" must be a whole number from 1 to {MAX_LISTED}')
    return limit
