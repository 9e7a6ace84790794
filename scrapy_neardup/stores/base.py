"""The store contract, in bucket terms, and the shared logic of single-process stores.

A store keeps document records and buckets (nshash sentence hash -> documents, SimHash table
key -> documents). ``check_and_add`` reads the candidate buckets and files the new document
in one step, so that of two copies of one story racing each other the second always sees
the first; the caller verifies the candidates and calls ``remove`` when the new document
turns out to be a duplicate.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import xxhash

from ..fingerprints.recipe import Recipe
from ..fingerprints.simhash import PermutedTables
from .errors import StoreError, StoreFormatError, StoreUnavailable
from .errors import StoreLost as StoreLost  # the stores and the crawl import them from here too
from .errors import StoreOptionError as StoreOptionError
from .record import COMMITTED, PENDING, DocRecord

# Bump when the byte layout of records or keys changes (a store class may have its own).
# 2: every document is filed under its key too (key_bucket).
# 3: records hold the text's story words and figures and the places of its sketch's hashes.
# 4: records may hold their sketch's hashes packed (a flag of the record says so).
FORMAT_VERSION = 4
# Earlier versions whose stores this one reads as they are (their records read alike). A store
# opened to write is marked with this version at once: an older release then refuses it, where it
# would misread the records this one writes.
READS_FORMATS = (3,)


# Called with the candidate records before filing; True means "a duplicate: do not file".
Confirm = Callable[[list[DocRecord]], bool]

# What Store.replace answers, besides the id of the copy that holds the story instead.
REPLACED = 0
GONE = -1  # the copy to replace, or the one replacing it, is no longer stored


# Recipe fields a user sets (NEARDUP_NSHASH_N, NEARDUP_SIMHASH_DISTANCE, or the command
# line's options); the others change only with scrapy-neardup's or the tokenizer's code.
CONFIGURABLE = frozenset({"nshash_n", "simhash_k"})


def sentence_bucket(key: int) -> bytes:
    return b"s" + key.to_bytes(8, "big")


def key_buckets(key: str) -> list[bytes]:
    """The bucket of the documents stored under ``key`` (its URL or id), so that a check finds
    what was stored under its own key whatever the text became (a revisit, an updated page);
    none for an empty key."""
    return [b"k" + xxhash.xxh64_digest(key.encode("utf-8", "surrogatepass"))] if key else []


@dataclass
class Probe:
    """What to read and where to file a new document."""

    # Longest sentence first, 2n of them: all are looked up (a reprint cut or edited may have
    # lost some of the original's n longest), the first n that are not boilerplate are filed.
    sentence_keys: list[int]
    simhash_buckets: list[bytes]
    nshash_n: int = 5
    boilerplate_limit: int = 5  # a sentence filed by this many stories is boilerplate
    bucket_read_limit: int = 200  # members read from one SimHash bucket at most


@dataclass
class Reservation:
    doc_id: int  # 0: not filed (``confirm`` found it a duplicate)
    candidates: list[DocRecord]
    sentence_keys: list[int] = field(default_factory=list)  # the keys the document was filed under


class Store(ABC):
    """A namespace of a fingerprint store. Subclasses: memory, LevelDB, Redis."""

    # A store that answers from this process's memory or disk (memory, LevelDB) is called
    # inline, one check at a time; a server store (False) gets a crawl's checks in batches,
    # one round trip each. Set by the class, so a store a user registers says it too.
    local = False
    # Its records outlive the process (memory's do not): what a stopped run stored is found by
    # the next run over it.
    lasting = True

    uri: str = ""
    namespace: str = "default"
    format_version: int = FORMAT_VERSION
    reads_formats: tuple[int, ...] = READS_FORMATS
    recipe: Recipe
    tables: PermutedTables

    @classmethod
    def from_uri(cls, uri: str, namespace: str = "default", **options: Any) -> Store:
        """Build the store named by ``uri``, taking the ``options`` this backend understands
        (the pipeline passes its whole configuration) and ignoring the others."""
        return cls(uri, namespace)  # type: ignore[call-arg]

    @classmethod
    def folder_of(cls, uri: str) -> str | None:
        """The folder a store at ``uri`` keeps its files in, which no other file of a run may
        be in (its output, a review page); None for a store with no files here."""
        return None

    def open(self, recipe: Recipe, create: bool = True) -> None:
        """Check (or, for a new store, record) the format version and recipe.

        With ``create`` False a store that does not exist yet is refused, not made: commands
        that only look at a store must not leave an empty one behind.
        """
        self.recipe = recipe
        self.tables = PermutedTables(recipe.simhash_k)
        wanted = {"format": self.format_version, "recipe": recipe.as_dict()}
        found = self.read_meta()
        self.created = found is None
        if found is None and not create:
            raise StoreUnavailable(f"there is no store at {self.describe()}: check --store and --namespace")
        if found is None:
            self.write_meta(wanted)
        elif found.get("format") not in (self.format_version, *self.reads_formats):
            raise StoreFormatError(
                f"store {self.describe()} was written by format version {found.get('format')}, "
                f"this scrapy-neardup reads version {self.format_version}; use a new store "
                "or the scrapy-neardup version that wrote it"
            )
        elif found.get("recipe") != wanted["recipe"]:
            stored: dict = found.get("recipe") or {}
            configured = recipe.as_dict()
            differ = sorted(name for name in set(stored) | set(configured) if stored.get(name) != configured.get(name))
            details = ", ".join(
                f"{name}: stored {stored.get(name)!r}, configured {configured.get(name)!r}" for name in differ
            )
            if set(differ) <= CONFIGURABLE:
                advice = "configure the stored values or use a new store or namespace"
            elif differ == ["tokens"]:
                advice = (
                    "the installed tokenizer cuts text differently (another dictionary): use a "
                    "new store or namespace, or the jieba or rjieba version that wrote it"
                )
            else:  # text processing or hashing changed between scrapy-neardup versions
                advice = (
                    "it was written by another scrapy-neardup version, which computes "
                    "fingerprints differently: use a new store or namespace, or the version "
                    "that wrote it"
                )
            raise StoreFormatError(
                f"store {self.describe()} holds fingerprints made with another recipe ({details}); "
                f"fingerprints of different recipes cannot be compared: {advice}"
            )
        elif found.get("format") != self.format_version and create:
            self.upgrade_meta({**found, "format": self.format_version})

    def upgrade_meta(self, meta: dict) -> None:
        """Write ``meta``, the stored one with a newer format version, over it."""
        self.write_meta(meta)

    # Made by the last open (there was no store); what it lost since this machine last used it,
    # found at open (see receipts.py).
    created = False
    lost_since_last_use: str | None = None

    def location(self) -> str | None:
        """Where the store lives, as this machine reaches it (its URI without credentials), for
        the receipts of stores.receipts; None for a store that keeps nothing across runs."""
        return None

    def last_id(self) -> int | None:
        """The highest document id handed out (ids only grow); None when unknown."""
        return None

    def marker(self) -> str | None:
        """A token written when the store was made, that a store made anew does not share."""
        return None

    def describe(self) -> str:
        return f"{self.uri} (namespace {self.namespace!r})"

    def buckets_of(self, record: DocRecord) -> list[bytes]:
        return (
            [sentence_bucket(k) for k in record.sentence_keys]
            + self.tables.keys(record.simhash)
            + key_buckets(record.key)
        )

    @abstractmethod
    def check_and_add(self, probe: Probe, record: DocRecord, confirm: Confirm | None = None) -> Reservation:
        """Read candidate records, give ``record`` an id and file it; return both.

        A store that reads and files within one process may first call ``confirm`` with the
        candidates and, when it returns True (a verified duplicate), file nothing and return
        doc_id 0: a duplicate then costs no write and no removal. A shared store (Redis)
        files in the same server-side step as it reads, and ignores ``confirm``.
        """

    # True when check_and_add_many files as it reads (several documents in one round trip),
    # and verification comes after: the detector then checks a batch with it.
    files_before_verifying = False

    # True when start_check_and_add_many takes a confirm per document (its third argument) and
    # calls it as soon as that document's candidates are known, filing a new story and taking a
    # duplicate out again, as check_and_add does with its confirm (Redis Cluster: its documents
    # are settled one by one, and other processes wait for that).
    confirms_in_batches = False

    def check_and_add_many(self, probes: list[Probe], records: list[DocRecord]) -> list[Reservation]:
        """:meth:`check_and_add` of each document in turn (stores that batch do better)."""
        return [self.check_and_add(probe, record) for probe, record in zip(probes, records)]

    def start_check_and_add_many(
        self, probes: list[Probe], records: list[DocRecord], confirms: Sequence[Confirm | None] | None = None
    ) -> Callable[[], list[Reservation]]:
        """:meth:`check_and_add_many`, with its answer read by calling the function returned.
        A server store works on the batch until then; this one has done it already.
        ``confirms``: each document's confirm, for a store that :attr:`confirms_in_batches`."""
        reservations = self.check_and_add_many(probes, records)
        return lambda: reservations

    @abstractmethod
    def find_candidates(self, probes: list[Probe]) -> list[list[DocRecord]]:
        """For each probe, the records :meth:`check_and_add` would return as candidates,
        read without changing the store: no record, no id, no counter, no clean-up."""

    def stored_under(self, key: str) -> list[DocRecord]:
        """The records stored under ``key`` (pending ones too), oldest first: one read of its
        key bucket, changing nothing."""
        found = self.find_candidates([Probe([], key_buckets(key), bucket_read_limit=1000)])[0]
        return sorted((record for record in found if record.key == key), key=lambda record: record.doc_id)

    def texts(self, doc_ids: list[int]) -> dict[int, str]:
        """The kept texts (:attr:`DocRecord.text`) of those of ``doc_ids`` stored with one; a
        store that keeps no texts has none."""
        return {}

    @abstractmethod
    def records(self) -> Iterator[DocRecord]:
        """Every stored record (pending ones too), oldest first, read without changing the store."""

    @abstractmethod
    def remove(self, doc_id: int) -> None:
        """Take a document out (a verified duplicate, or a reservation whose item failed)."""

    def remove_many(self, doc_ids: list[int]) -> None:
        for doc_id in doc_ids:
            self.remove(doc_id)

    def remove_later(self, doc_ids: list[int]) -> None:
        """:meth:`remove_many`, or at the latest with the store's next call (Redis: in the
        next batch's round trip). This process never sees them again either way."""
        self.remove_many(doc_ids)

    @abstractmethod
    def commit(self, doc_id: int) -> None:
        """Turn a pending reservation into a committed document; one that replaces a copy
        (:meth:`replace`) takes that copy out in the same step."""

    def replace(self, record: DocRecord, old: DocRecord) -> int:
        """Make the filed document ``record`` its story's copy in place of ``old``, in one
        atomic step: ``record`` takes ``old``'s story id (its ``similar_id``) and ``old`` is
        taken out, at once for a committed ``record`` and by :meth:`commit` for a pending one
        (until then ``old`` stays, and :meth:`remove` of ``record`` leaves it in place).

        Of two copies replacing one story, one wins: :data:`REPLACED` for it; for the other
        the id of the pending copy replacing ``old`` already, or :data:`GONE` when ``old`` (or
        ``record``) is no longer stored.
        """
        raise StoreError(f"store {self.describe()} cannot replace a stored copy: keep NEARDUP_PREFER = 'first' with it")

    @abstractmethod
    def get(self, doc_id: int) -> DocRecord | None: ...

    @abstractmethod
    def purge(self, older_than: float) -> int:
        """Remove documents stored before ``older_than`` (epoch seconds); return how many."""

    # True when :meth:`purge` may run in a thread of its own while this store is used by
    # another, and takes ``background=True`` there: a crawl then goes on while its old
    # documents are purged.
    purges_in_background = False
    # True when :meth:`purge` takes ``background=True`` to rest between its batches
    # (stores/pacing.py), so that checks beside it, in this process or in others sharing the
    # store, keep their rate (``neardup purge --paced``).
    paces_purges = False

    @abstractmethod
    def count(self) -> int:
        """Documents stored in this namespace."""

    @abstractmethod
    def read_meta(self) -> dict | None:
        """What the store recorded about itself (format version, recipe, layout); None when
        there is no such store yet."""

    @abstractmethod
    def write_meta(self, meta: dict) -> None:
        """Record ``meta`` (a new store, at its first open)."""

    def close(self) -> None:  # noqa: B027 - a store with nothing to let go keeps this one
        """Let the store's files or connections go."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalStore(Store):
    """Check-and-add for stores used by one process, written on a few primitives."""

    local = True

    @abstractmethod
    def _members(self, bucket: bytes, limit: int) -> list[int]:
        """Up to ``limit`` document ids filed under ``bucket``, oldest first."""

    def _members_of(self, buckets: list[bytes], limit: int) -> list[list[int]]:
        """:meth:`_members` of each bucket; a store may read them in one go."""
        return [self._members(bucket, limit) for bucket in buckets]

    @abstractmethod
    def _records(self, doc_ids: Iterable[int]) -> list[DocRecord]: ...

    @abstractmethod
    def _next_id(self) -> int: ...

    @abstractmethod
    def _save(self, record: DocRecord, buckets: list[bytes]) -> None: ...

    @abstractmethod
    def _delete(self, record: DocRecord, buckets: list[bytes]) -> None: ...

    def check_and_add(self, probe: Probe, record: DocRecord, confirm: Confirm | None = None) -> Reservation:
        keys, limit, read_limit = probe.sentence_keys, probe.boilerplate_limit, probe.bucket_read_limit
        sentence_buckets = [sentence_bucket(key) for key in keys]
        own_key = key_buckets(record.key)
        # Every bucket in one read, each as far as a SimHash bucket is read: a sentence's first
        # ``limit`` members are its evidence, and a boilerplate sentence's are wanted further
        # (_passed_over). A bucket's members come oldest first, so the first ``limit`` are
        # those a read of ``limit`` gives.
        tables = len(probe.simhash_buckets)
        read = self._members_of(sentence_buckets + probe.simhash_buckets + own_key, max(limit, read_limit))
        found = [members[:limit] for members in read[: len(keys)]]
        # A sentence filed by ``limit`` stories is boilerplate: neither key nor evidence.
        kept = [i for i, members in enumerate(found) if len(members) < limit]
        filed_keys = [keys[i] for i in kept[: probe.nshash_n]]
        filed_buckets = [sentence_buckets[i] for i in kept[: probe.nshash_n]]
        candidates = {doc_id for i in kept for doc_id in found[i]}
        table_members = [members[:read_limit] for members in read[len(keys) :]]
        nearby = {doc_id for members in table_members[:tables] for doc_id in members}
        under_key = table_members[tables:]
        for members in under_key:
            candidates.update(members)
        boilerplate = [read[i][:read_limit] for i, members in enumerate(found) if len(members) >= limit]
        nearby -= self._passed_over(nearby - candidates, record.simhash, boilerplate, under_key, read_limit)
        candidates |= nearby
        records = self._candidate_records(candidates, probe, record) if candidates else []
        record.sentence_keys = filed_keys
        if confirm is not None and confirm(records):
            return Reservation(0, records, filed_keys)
        record.doc_id = self._next_id()
        # The probe's SimHash buckets are the record's own (empty when SimHash is not a method).
        self._save(record, filed_buckets + (probe.simhash_buckets or self.tables.keys(record.simhash)) + own_key)
        return Reservation(record.doc_id, records, filed_keys)

    def _candidate_records(self, doc_ids: set[int], probe: Probe, record: DocRecord) -> list[DocRecord]:
        """The records of ``doc_ids`` that the verdict on ``record`` may use; a store that
        decodes records leaves out those the rule passes over (:func:`.record.passed_over`)."""
        return self._records(doc_ids)

    def _passed_over(
        self, doc_ids: set[int], simhash: int, boilerplate: list[list[int]], under_key: list[list[int]], read_limit: int
    ) -> set[int]:
        """Those of ``doc_ids`` (members of SimHash buckets only) whose records the verdict rule
        would pass over, so need not be read: a SimHash farther than k, no key shared with the
        document (it would be in that key's bucket; a boilerplate bucket, not read as evidence,
        is read here up to ``read_limit``), not a copy replacing another (a pending one
        matters), and not under the document's own key (that bucket was read in full)."""
        far = self._far_by_simhash(doc_ids, simhash)
        if not far or any(len(members) >= read_limit for members in under_key):
            return set()
        far -= set(self._claims().values())
        for members in boilerplate:
            if len(members) >= read_limit:
                return set()
            far.difference_update(members)
        return far

    def _far_by_simhash(self, doc_ids: set[int], simhash: int) -> set[int]:
        """Those of ``doc_ids`` known, without reading their records, to have a SimHash farther
        than the recipe's distance from ``simhash``; none here (every record is read)."""
        return set()

    def find_candidates(self, probes: list[Probe]) -> list[list[DocRecord]]:
        return [self._records(self._candidate_ids(probe)) for probe in probes]

    def _candidate_ids(self, probe: Probe) -> list[int]:
        """The ids check_and_add reads for ``probe``: sentence buckets under the boilerplate
        limit, then SimHash buckets; oldest first."""
        limit = probe.boilerplate_limit
        found = self._members_of([sentence_bucket(key) for key in probe.sentence_keys], limit)
        ids = {doc_id for members in found if len(members) < limit for doc_id in members}
        for members in self._members_of(probe.simhash_buckets, probe.bucket_read_limit):
            ids.update(members)
        return sorted(ids)

    def remove(self, doc_id: int) -> None:
        record = self.get(doc_id)
        if record is not None:
            self._superseded(record, taken=False)
            self._delete(record, self.buckets_of(record))

    def commit(self, doc_id: int) -> None:
        record = self.get(doc_id)
        if record is not None and record.state == PENDING:
            record.state = COMMITTED
            old = self._superseded(record)
            if old is None:
                self._save(record, [])
            else:
                self._swap(record, old)

    def replace(self, record: DocRecord, old: DocRecord) -> int:
        claims = self._claims()
        if self.get(old.doc_id) is None or self.get(record.doc_id) is None:
            return GONE
        holder = claims.get(old.doc_id, record.doc_id)
        if holder != record.doc_id:
            held = self.get(holder)
            if held is not None and held.state == PENDING and held.replaces == old.doc_id:
                return holder
        record.story, record.replaces = old.story_id, old.doc_id
        if record.state == PENDING:
            claims[old.doc_id] = record.doc_id
            self._save(record, [])
        else:
            claims.pop(old.doc_id, None)
            self._swap(record, old)
        return REPLACED

    def _claims(self) -> dict[int, int]:
        """Copies being replaced -> the pending copy replacing each (one at a time)."""
        return self.__dict__.setdefault("_claimed", {})

    def _superseded(self, record: DocRecord, taken: bool = True) -> DocRecord | None:
        """Forget ``record``'s claim on the copy it replaces; that copy, if ``taken``."""
        if not record.replaces:
            return None
        claims = self._claims()
        if claims.get(record.replaces) == record.doc_id:
            del claims[record.replaces]
        return self.get(record.replaces) if taken else None

    def _swap(self, record: DocRecord, old: DocRecord) -> None:
        """Write ``record`` (filed already) and take ``old`` out; a store on disk does both
        in one write."""
        self._save(record, [])
        self._delete(old, self.buckets_of(old))

    def get(self, doc_id: int) -> DocRecord | None:
        found = self._records([doc_id])
        return found[0] if found else None


def encode_meta(meta: dict) -> bytes:
    return json.dumps(meta, sort_keys=True).encode("utf-8")


def decode_meta(data: bytes | None, where: str) -> dict | None:
    """The metadata a store wrote about itself; StoreFormatError when what is there is not a
    JSON object (the key or namespace is another program's, or damaged): nothing is changed."""
    if data is None:
        return None
    try:
        meta = json.loads(data.decode("utf-8"))
    except ValueError:  # not UTF-8, or not JSON
        meta = None
    if not isinstance(meta, dict):
        shown = repr(data[:40].decode("utf-8", "replace")) + ("..." if len(data) > 40 else "")
        raise StoreFormatError(
            f"{where} holds metadata that scrapy-neardup did not write ({shown}): another program's data "
            "or a damaged store, left as it is; use another namespace or store"
        )
    return meta
