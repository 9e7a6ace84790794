"""``redis+cluster://host:port[,host:port...]/``: a store spread over the masters of a Redis Cluster.

A namespace's buckets, records and time index are spread over all 16,384 hash slots, so every
master holds its share; only the namespace's meta, marker and id counter share one slot. A
Lua script may touch the keys of one slot only, so check-and-add cannot be one script as on one
Redis. It is a protocol of atomic steps instead, each on one slot, every step safe to repeat:

1. **Number.** The batch takes its ids from the namespace's counter (one INCRBY). The counts of
   the documents' sentence buckets are read in the same round trip, to choose the keys each
   document is filed under (the first n that are not boilerplate, as on one Redis).
2. **Write.** Each record is written, as *undecided*, with a lease (``LEASE``): before any bucket
   names it, so whoever finds an id in a bucket finds its record or knows it is gone.
3. **File and read.** For each bucket, one script appends the document's id and returns the ids
   that were there before it. Of two documents filed under one bucket, the second to get there
   sees the first: of two copies of one story, at least one sees the other.
4. **Decide.** A document is judged (the detector's ``confirm``) against what it saw: every
   document with a lower id, decided or not (as one Redis judges against everything filed
   before), and every document with a higher id that is decided and kept. A document with a
   higher id still undecided is waited for (it took its id after this one, yet got to a
   shared bucket first; its own check does not wait for lower ids, so the waits end). Of two
   racing copies, the one that saw the other defers to it: 0 kept twice, and never 0 kept.
   A sentence is boilerplate when it holds ``boilerplate_limit`` *kept* documents: copies
   still undecided are evidence but not counted, or copies of a story in flight would fill
   its sentences' buckets and hide its kept copy (:func:`sentence_evidence`).
5. **Settle.** A duplicate is taken out of its record's slot and its buckets; a new story's
   record turns *kept*, with its reservation's or the store's expiry. Then ``WAIT 1`` on every
   master written to that has a replica, so no verdict is given for a write a failover could
   lose. A master that fails in the middle of a batch or during its ``WAIT`` (a replica
   promoted) gets the batch's writes to its slots again on the new master, in their order (the
   ids taken as the counter raised to at least the last one).

Key layout (``lua/README.md``): ``neardup:{T}:<namespace>:...`` where ``T`` is a short tag that
hashes to the slot chosen for the key: bucket shard hashes ``h:<window>:<shard>`` by the bucket's
hash (``shards`` per window, a layout option, 1,048,576 by default), records ``r:<id>``, their
kept texts ``x:<id>`` and claims ``c:<id>`` by the id's hash, each slot's time index ``t`` and
deadlines ``p``, and each slot's marker ``mark``. A record is stored after one status byte: ``u``
undecided, ``k`` kept.
"""

from __future__ import annotations

import heapq
import logging
import math
import os
import time
from binascii import crc_hqx
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import xxhash
from redis.crc import key_slot

from ...fingerprints.fingerprint import Recipe
from .. import receipts
from ..base import (
    GONE,
    REPLACED,
    Confirm,
    Probe,
    Reservation,
    Store,
    StoreFormatError,
    StoreUnavailable,
    key_buckets,
    sentence_bucket,
)
from ..pacing import Pace
from ..record import COMMITTED, HEAD_SIZE, PENDING, DocRecord, pack_text, unpack_text
from .cluster import parse_cluster_uri
from .slots import Call, SlotRouter, remember
from .store import _CACHE_SIZE, WINDOWS_PER_TTL, RedisStore, _script

logger = logging.getLogger(__name__)

SLOTS = 16384
DEFAULT_SHARDS = 1 << 20  # bucket shard hashes per window: compact (listpack) up to ~5M documents a window
DEFAULT_SPREAD = 1024  # hash slots a namespace's buckets and records use, evenly spaced
LEASE = 30.0  # seconds an undecided document lives: its check settles it long before
BOUNDARY = 60.0  # a document this close after a window's start is filed in the window before too
_STATE = HEAD_SIZE  # 1-based position of a record's state byte in a value (after the status byte)
UNDECIDED, KEPT = b"u", b"k"
_WAIT_MS = 1000  # how long a master's replica may take to acknowledge a batch's writes
PURGE_BATCH = 3200  # documents a batch of purge takes out (it reads slots' time indexes until it has them)
PURGE_SLOTS = 32  # slots whose time indexes purge reads in one round trip
PURGE_PAGE = 100  # documents purge reads from one slot's time index at a time

CLUSTER_SCRIPTS = {
    name: _script("cluster_mark", f"cluster_{name}")
    for name in ("number", "write", "file", "unfile", "keep", "drop", "commit", "claim", "rewrite", "count")
}


@lru_cache(maxsize=1)
def slot_tags() -> tuple[bytes, ...]:
    """For each hash slot, the smallest decimal number whose CRC16 lands in it: the hash tag
    that puts a key in that slot."""
    tags: list[bytes | None] = [None] * SLOTS
    left, number = SLOTS, 0
    while left:
        tag = b"%d" % number
        slot = crc_hqx(tag, 0) % SLOTS
        if tags[slot] is None:
            tags[slot] = tag
            left -= 1
        number += 1
    return tuple(tags)  # type: ignore[arg-type]


def _member(doc_id: int) -> bytes:
    return doc_id.to_bytes(8, "big")


def _ids(value: bytes) -> list[int]:
    return [int.from_bytes(value[at : at + 8], "big") for at in range(0, len(value), 8)]


def sentence_evidence(members: list[tuple[int, bool]], limit: int) -> list[int] | None:
    """The ids a sentence bucket gives as evidence, from its live members (id, whether kept):
    all of them, or None when ``limit`` of them are kept stories (boilerplate: no evidence).

    Only kept documents count toward the limit: one still undecided may be a copy of the
    story on its way out, and with ``limit`` copies of a story in flight at once, counting
    them would make each of its sentences look like boilerplate, hide its kept copy and keep
    one more. So the limit counts stories, as in a store that judges one document at a time
    (there a bucket holds kept documents only)."""
    if sum(kept for _, kept in members) >= limit:
        return None
    return [doc_id for doc_id, _ in members]


_KEYS_A_CALL = 254  # shard hashes a file or unfile call names: their index in KEYS is one byte, from 2


@dataclass
class _ShardCall:
    """The shard hashes of one slot that one file or unfile call names, and its operations."""

    keys: dict[bytes, int] = field(default_factory=dict)  # shard key -> its index in KEYS
    ops: list[bytes] = field(default_factory=list)
    where: list[Any] = field(default_factory=list)  # what each operation's reply is for

    @staticmethod
    def index(groups: dict[int, list[_ShardCall]], slot: int, key: bytes) -> tuple[_ShardCall, int]:
        """The call of ``slot`` to put an operation on ``key`` in, and the key's index there: a
        slot whose call names as many keys as an index can hold gets another call."""
        calls = groups.setdefault(slot, [])
        if not calls or (key not in calls[-1].keys and len(calls[-1].keys) >= _KEYS_A_CALL):
            calls.append(_ShardCall())
        call = calls[-1]
        return call, call.keys.setdefault(key, len(call.keys) + 2)


@dataclass
class _Bucket:
    """One bucket of one document: where it lives and what the document found in it."""

    name: bytes
    sentence: bool  # a sentence bucket (the boilerplate limit applies)
    shard: int = 0  # the shard hash it is a field of (set by the store)
    read: bool = True  # its ids are candidates (SimHash buckets are filed but not read when SimHash is not a method)
    file: bool = True  # the document is to be filed under it
    filed: bool = False
    older: list[int] = field(default_factory=list)  # ids of the windows before the current one
    before: list[int] = field(default_factory=list)  # ids of the current window before the document


@dataclass
class _Doc:
    probe: Probe
    record: DocRecord
    confirm: Confirm | None
    windows: list[bytes]  # the windows filed in (the current one last)
    buckets: list[_Bucket] = field(default_factory=list)
    candidates: list[DocRecord] = field(default_factory=list)
    waiting: set[int] = field(default_factory=set)  # undecided higher ids it waits for
    outcome: str = ""  # "kept" or "duplicate" once confirmed
    planned_keys: list[int] = field(default_factory=list)


class RedisClusterStore(RedisStore):
    """A namespace spread over a Redis Cluster; shared by every process that opens it.

    Options as :class:`RedisStore`'s, plus ``shards`` (bucket hashes per time window, fixed when
    the namespace is created; None takes the store's own, or the URI's ``?shards=``) and
    ``failover_wait`` (seconds a call waits for the cluster to promote a replica of a master
    that stopped answering, before the store counts as down).
    """

    files_before_verifying = True
    confirms_in_batches = True

    def __init__(
        self,
        uri: str,
        namespace: str = "default",
        *,
        shards: int | None = None,
        slots: int | None = None,
        failover_wait: float = 15.0,
        **options: Any,
    ):
        if "{" in namespace or "}" in namespace:
            raise StoreUnavailable(f"a Redis Cluster namespace may not hold '{{' or '}}': {namespace!r}")
        try:
            target = parse_cluster_uri(uri)
            given_shards, given_slots = target.shards, target.slots
        except ValueError:
            given_shards = given_slots = None  # RedisStore names the fault
        self.shards = shards or given_shards
        self.slots = slots or given_slots
        if self.slots is not None and (self.slots < 1 or SLOTS % self.slots):
            raise StoreUnavailable(f"slots must be a power of two from 1 to {SLOTS}, got {self.slots}")
        self._given = (self.shards, self.slots)
        super().__init__(uri, namespace, **options)
        self._router = SlotRouter(self.client, failover_wait)
        self._sha = {name: self._router.script(source) for name, source in CLUSTER_SCRIPTS.items()}
        self._key_prefix = self.prefix.split(":{", 1)[0].encode("utf-8")
        self._namespace = namespace.encode("utf-8")
        self._prefixes: dict[int, bytes] = {}  # slot -> the namespace's key prefix there
        self._markers: dict[int, bytes] = {}  # slot -> the namespace's marker key there
        # recent kept documents -> the windows and buckets they are filed under (no read to remove them)
        self._filed_at: OrderedDict[int, tuple[list[bytes], list[bytes]]] = OrderedDict()
        self._replacing_old: dict[int, DocRecord] = {}  # pending replacing document -> the copy
        self._warned_wait = False

    def _set_ttl(self, ttl: float | None) -> None:
        super()._set_ttl(ttl)
        spread = self.slots or DEFAULT_SPREAD
        self._layout = {"shards": self.shards or DEFAULT_SHARDS, "slots": spread, "window": self._window}
        self._step = SLOTS // spread  # the slots used: every step-th one

    # -- keys ---------------------------------------------------------------------------

    def _in_slot(self, slot: int, name: bytes) -> bytes:
        """The key ``name`` of the namespace in hash ``slot``. Each slot's prefix is made when
        first used: a namespace uses 1,024 of the 16,384 slots by default, and a process (a
        test run, a server) may open many namespaces."""
        prefix = self._prefixes.get(slot)
        if prefix is None:
            prefix = self._prefixes[slot] = b"%s:{%s}:%s:" % (self._key_prefix, slot_tags()[slot], self._namespace)
        return prefix + name

    def _used_slots(self) -> range:
        """The hash slots the namespace's buckets, records and time index live in: evenly
        spaced, so that masters serving equal ranges of slots hold equal shares."""
        return range(0, SLOTS, self._step)

    def _slot_of_id(self, doc_id: int) -> int:
        return xxhash.xxh32_intdigest(_member(doc_id)) % (SLOTS // self._step) * self._step

    def _slot_of_shard(self, shard: int) -> int:
        return shard % (SLOTS // self._step) * self._step

    def _record_key(self, doc_id: int, kind: bytes = b"r") -> bytes:
        return self._in_slot(self._slot_of_id(doc_id), b"%s:%d" % (kind, doc_id))

    def _shard_of(self, bucket: bytes) -> int:
        return xxhash.xxh32_intdigest(bucket) % (self.shards or DEFAULT_SHARDS)

    def _shard_key(self, window: bytes, shard: int) -> bytes:
        return self._in_slot(self._slot_of_shard(shard), b"h:%s:%d" % (window, shard))

    def _shard_keys(self) -> Callable[[bytes, int], bytes]:
        """:meth:`_shard_key`, remembered for the calls of one batch."""
        made: dict[tuple[bytes, int], bytes] = {}

        def key(window: bytes, shard: int) -> bytes:
            found = made.get((window, shard))
            if found is None:
                found = made[(window, shard)] = self._shard_key(window, shard)
            return found

        return key

    def _marker(self, slot: int) -> bytes:
        """The namespace's marker key in ``slot``, kept packed (it is in every script call)."""
        marker = self._markers.get(slot)
        if marker is None:
            marker = self._markers[slot] = self._in_slot(slot, b"mark")
            remember(marker)
        return marker

    def _script_call(self, name: str, slot: int, keys: list[bytes], args: list[Any]) -> Call:
        return (slot, ("EVALSHA", self._sha[name], len(keys) + 1, self._marker(slot), *keys, self._mark, *args))

    # -- calls --------------------------------------------------------------------------

    def _run(self, calls: list[Call], log: list[Call] | None = None) -> list[Any]:
        """Run ``calls`` (through :meth:`_call`: errors become store errors); a reply that is an
        error is raised. Writes in ``log`` are sent again to the slots of a master that failed
        meanwhile, so what it may have lost is on the replica that took its place."""
        if not calls:
            return []

        def run() -> list[Any]:
            replies = self._router.run(calls)
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
            if log is not None:
                log.extend(calls)
                self._send_again(log)
            return replies

        return self._call(run)

    def _send_again(self, log: list[Call]) -> None:
        """Send the writes in ``log`` to the slots of every master that failed since the last
        time, in their order, until none fails meanwhile."""
        while self._router.failed_slots:
            failed, self._router.failed_slots = self._router.failed_slots, set()
            again = [call for call in log if isinstance(call[0], int) and call[0] in failed]
            for reply in self._router.run(again):
                if isinstance(reply, Exception):
                    raise reply

    def _after_fork(self) -> None:
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._client_id = f"{self._pid}-{os.urandom(6).hex()}"
            self._router.reset()

    def _wait_replicas(self, log: list[Call]) -> None:
        """WAIT until a replica of every master written to has this process's writes. A master
        that fails meanwhile may not have passed on the writes in ``log`` before its replica took
        its place: they are sent again to the new master, and waited for there."""
        acked = self._call(self._router.wait_replicas, _WAIT_MS)
        while self._router.failed_slots:
            self._call(self._send_again, log)
            acked |= self._call(self._router.wait_replicas, _WAIT_MS)
        late = sorted(name for name, replicas in acked.items() if replicas < 1)
        if late and not self._warned_wait:
            self._warned_wait = True
            logger.warning(
                "no replica of %s acknowledged the store's writes within %d ms: a failover now "
                "could lose the last ones (is the replica up and in sync?)",
                ", ".join(late),
                _WAIT_MS,
            )

    # -- meta ---------------------------------------------------------------------------

    def open(self, recipe: Recipe, create: bool = True) -> None:
        self._check_password()
        self._check_server()
        Store.open(self, recipe, create)
        layout = (self.read_meta() or {}).get("layout") or {}
        given_shards, given_slots = self._given
        self.shards, self.slots = given_shards or layout.get("shards"), given_slots or layout.get("slots")
        if self.ttl is None and layout.get("window"):
            self._set_ttl(layout["window"] * WINDOWS_PER_TTL)  # no TTL given: the store's own
        self._set_ttl(self.ttl)
        if layout != self._layout:
            stored_ttl = layout["window"] * WINDOWS_PER_TTL if layout.get("window") else None
            raise StoreFormatError(
                f"store {self.describe()} was created with ttl {stored_ttl!r}, {layout.get('shards')} shards "
                f"and {layout.get('slots')} slots, this process asks for ttl {self.ttl!r}, "
                f"{self._layout['shards']} shards and {self._layout['slots']} slots: every process sharing "
                "a namespace must use the same; leave them out to use the stored ones, or use a new namespace"
            )
        self._mark = self._read_mark()
        remember(self._mark)
        self._check_markers()

    def write_meta(self, meta: dict) -> None:
        """Create the namespace: its marker in the control slot, then in every slot, then its
        meta (a process that died half-way leaves no meta, and the next one finishes it)."""
        if self._call(self.client.exists, self._key("n")):
            raise self._lost("it holds documents but no meta key")
        # Markers without the namespace's own marker (another process creates the namespace
        # in the same moment otherwise: it writes that one first)
        held = [name for name, value in self._first_markers().items() if value is not None]
        if held and not self._call(self.client.exists, self._key("mark")):
            raise self._lost(
                f"its meta key is gone, but {', '.join(held)} still hold its markers: the master serving its meta lost its data"
            )
        self._mark = self._read_mark()
        self._run([(slot, ("SET", self._marker(slot), self._mark, "NX")) for slot in self._used_slots()])
        super().write_meta(meta)

    def _first_markers(self) -> dict[str, bytes | None]:
        """Each master's marker in the first of the namespace's slots it serves."""
        firsts: dict[str, int] = {}
        for slot in self._used_slots():
            firsts.setdefault(self._router.master_of(slot), slot)
        replies = self._run([(slot, ("GET", self._marker(slot))) for slot in firsts.values()])
        return dict(zip(firsts, replies))

    def _check_markers(self) -> None:
        """A master restarted empty lost the markers of all its slots: one slot of each tells
        (every script checks its own slot's marker later)."""
        lost = sorted(name for name, value in self._first_markers().items() if value != self._mark)
        if lost:
            raise self._lost(f"the master{'s' if len(lost) > 1 else ''} {', '.join(lost)} lost the namespace's marker")

    def _node_pool(self) -> Any:
        """A node's connection pool: every node has the password the URI gives."""
        return self.client.get_redis_connection(self.client.get_default_node()).connection_pool

    def _check_server(self) -> None:
        """The checks of one Redis, on every node of the cluster (masters and replicas)."""
        for node in self.client.get_nodes():
            client = self.client.get_redis_connection(node)
            self._check_settings(self._server_settings(client), node.name)

    # -- check-and-add --------------------------------------------------------------------

    def check_and_add(self, probe: Probe, record: DocRecord, confirm: Confirm | None = None) -> Reservation:
        return self.start_check_and_add_many([probe], [record], [confirm])()[0]

    def check_and_add_many(self, probes: list[Probe], records: list[DocRecord]) -> list[Reservation]:
        return self.start_check_and_add_many(probes, records)()

    def start_check_and_add_many(
        self, probes: list[Probe], records: list[DocRecord], confirms: Sequence[Confirm | None] | None = None
    ) -> Callable[[], list[Reservation]]:
        """Check-and-add of a batch, each document confirmed (``confirms``, as
        :meth:`check_and_add` takes one) as soon as its candidates are known: a duplicate is
        taken out again at once, a new story kept. Without a confirm a document is kept.
        The work happens when the function returned is called."""
        confirms = confirms or [None] * len(records)
        return lambda: self._check(probes, records, confirms)

    def _windows_of(self, when: float) -> list[bytes]:
        """The windows a document of time ``when`` is filed in: its own, and the one before
        when it is within BOUNDARY of its window's start (so that two copies checked on either
        side of a window's start, by clocks apart, meet in one)."""
        own = self._window_of(when)
        if self._window and when - int(when // self._window) * self._window < min(BOUNDARY, self._window / 2):
            return [b"%d" % (int(when // self._window) - 1), own]
        return [own]

    def _read_windows(self, now: float) -> list[bytes]:
        return self._windows(now).split(b",")

    def _check(
        self, probes: list[Probe], records: list[DocRecord], confirms: Sequence[Confirm | None]
    ) -> list[Reservation]:
        if not records:
            return []
        self._after_fork()
        docs = [self._plan(probe, record, confirm) for probe, record, confirm in zip(probes, records, confirms)]
        log: list[Call] = []
        self._number_and_count(docs, log)
        self._write_records(docs, log)
        self._file(docs, log)
        self._decide(docs, log)
        self._wait_replicas(log)
        return [
            Reservation(doc.record.doc_id if doc.outcome == "kept" else 0, doc.candidates, doc.record.sentence_keys)
            for doc in docs
        ]

    def _plan(self, probe: Probe, record: DocRecord, confirm: Confirm | None) -> _Doc:
        doc = _Doc(probe, record, confirm, self._windows_of(record.time))
        doc.buckets = [_Bucket(sentence_bucket(key), True) for key in probe.sentence_keys]
        # The probe's SimHash buckets are the record's own (empty when SimHash is not a method:
        # then the record's are filed under, not read).
        simhash = probe.simhash_buckets or self.tables.keys(record.simhash)
        doc.buckets += [_Bucket(name, False, read=bool(probe.simhash_buckets)) for name in simhash]
        doc.buckets += [_Bucket(name, False) for name in key_buckets(record.key)]
        for bucket in doc.buckets:
            bucket.shard = self._shard_of(bucket.name)
        return doc

    def _hget(self, window: bytes, bucket: bytes) -> Call:
        shard = self._shard_of(bucket)
        return (self._slot_of_shard(shard), ("HGET", self._shard_key(window, shard), bucket))

    def _number_call(self, count: int, *at_least: int) -> Call:
        return (
            self._control_slot(),
            ("EVALSHA", self._sha["number"], 2, self._key("mark"), self._key("n"), self._mark, count, *at_least),
        )

    def _number_and_count(self, docs: list[_Doc], log: list[Call]) -> None:
        """Step 1: ids for the batch; the ids of older windows and the sentence buckets' counts.
        The ids taken are logged as a counter at least as high (taking them is not safe to repeat)."""
        now = docs[-1].record.time
        calls: list[Call] = [self._number_call(len(docs))]
        where: list[tuple[_Bucket, bool]] = []  # the bucket each read is for; True: current window
        shard_key = self._shard_keys()
        for doc in docs:
            read = self._read_windows(now)
            for bucket in doc.buckets:
                for window in read:
                    current = window in doc.windows
                    if current and not bucket.sentence:
                        continue  # read as it is filed (step 3)
                    calls.append(
                        (self._slot_of_shard(bucket.shard), ("HGET", shard_key(window, bucket.shard), bucket.name))
                    )
                    where.append((bucket, current))
        replies = self._run(calls)
        last = int(replies[0])
        log.append(self._number_call(0, last))
        self._check_id(last - len(docs) + 1)
        self._highest_id = last  # the batch's other ids
        for offset, doc in enumerate(docs):
            doc.record.doc_id = last - len(docs) + 1 + offset
        counts: dict[int, int] = {}
        current_ids: dict[int, list[int]] = {}
        for (bucket, current), value in zip(where, replies[1:]):
            ids = _ids(value or b"")
            if current:
                current_ids.setdefault(id(bucket), []).extend(ids)
            else:
                bucket.older += ids
            counts[id(bucket)] = counts.get(id(bucket), 0) + len(ids)
        for doc in docs:
            limit, keys = doc.probe.boilerplate_limit, doc.probe.sentence_keys
            filed: list[int] = []
            for index, bucket in enumerate(doc.buckets[: len(keys)]):
                bucket.file = counts.get(id(bucket), 0) < limit and len(filed) < doc.probe.nshash_n
                if bucket.file:
                    filed.append(keys[index])
                else:  # read, not filed: what step 1 read is its evidence
                    bucket.before = current_ids.get(id(bucket), [])
            doc.record.sentence_keys = doc.planned_keys = filed

    def _control_slot(self) -> int:
        """The slot of the namespace's meta, marker and counter (tagged with the namespace)."""
        return key_slot(self._key("n"))

    def _value(self, doc: _Doc, status: bytes) -> bytes:
        return status + doc.record.to_bytes()

    def _write_records(self, docs: list[_Doc], log: list[Call]) -> None:
        """Step 2: the records, undecided, before any bucket names them."""
        lease = math.ceil(LEASE * 1000)
        by_slot: dict[int, tuple[list[bytes], list[Any]]] = {}
        for doc in docs:
            record = doc.record
            slot = self._slot_of_id(record.doc_id)
            keys, args = by_slot.setdefault(slot, ([], []))
            keys += [self._record_key(record.doc_id), self._record_key(record.doc_id, b"x")]
            args += [
                self._value(doc, UNDECIDED),
                b"" if record.text is None else pack_text(record.text),
                repr(float(record.time)),
                _member(record.doc_id),
            ]
        calls = [
            self._script_call(
                "write",
                slot,
                [self._in_slot(slot, b"t"), self._in_slot(slot, b"p"), *keys],
                [self._cutoff(docs[-1].record.time), lease, *args],
            )
            for slot, (keys, args) in by_slot.items()
        ]
        self._run(calls, log)

    def _window_ms(self, doc: _Doc) -> int:
        if not self._window:
            return 0
        window_end = (doc.record.time // self._window + 1) * self._window
        return max(1, math.ceil((window_end + self.ttl - doc.record.time) * 1000))  # type: ignore[operator]

    def _file(self, docs: list[_Doc], log: list[Call]) -> None:
        """Step 3: file each document under its buckets, reading what was there before it."""
        groups: dict[int, list[_ShardCall]] = {}
        expire = 0
        shard_key = self._shard_keys()
        for doc in docs:
            expire = max(expire, self._window_ms(doc))
            member = _member(doc.record.doc_id)
            sentence_head = (
                bytes((doc.probe.boilerplate_limit,)) + (doc.probe.boilerplate_limit + 16).to_bytes(2, "big") + member
            )
            other_head = b"\0" + min(65535, 2 * doc.probe.bucket_read_limit + 16).to_bytes(2, "big") + member
            for window in doc.windows:
                current = window == doc.windows[-1]
                for bucket in doc.buckets:
                    if not bucket.file:
                        continue
                    shard = bucket.shard
                    call, index = _ShardCall.index(groups, self._slot_of_shard(shard), shard_key(window, shard))
                    head = sentence_head if bucket.sentence else other_head
                    call.ops.append(b"%c%s%c%s" % (index, head, len(bucket.name), bucket.name))
                    call.where.append((bucket, current))
        calls, order = [], []
        for slot, slot_calls in groups.items():
            for call in slot_calls:
                calls.append(self._script_call("file", slot, list(call.keys), [expire, b"".join(call.ops)]))
                order.append(call.where)
        for where, replies in zip(order, self._run(calls, log)):
            for (bucket, current), (filed, before) in zip(where, replies):
                if current:
                    bucket.before = _ids(before)
                    bucket.filed = bool(filed)
                else:
                    bucket.older = _ids(before) + bucket.older

    def _fetch(self, doc_ids: list[int]) -> dict[int, tuple[bytes, DocRecord] | None]:
        """Status and record of each id (None when its record has gone)."""
        found: dict[int, tuple[bytes, DocRecord] | None] = {}
        ids = sorted(set(doc_ids))
        replies = self._run([(self._slot_of_id(i), ("GET", self._record_key(i))) for i in ids])
        for doc_id, value in zip(ids, replies):
            found[doc_id] = None if value is None else (value[:1], DocRecord.from_bytes(value[1:]))
        return found

    def _decide(self, docs: list[_Doc], log: list[Call]) -> None:
        """Steps 4 and 5: judge each document when what it saw is known, settle it, and wait for
        the undecided documents with higher ids that got to a shared bucket first."""
        batch = {doc.record.doc_id: doc for doc in docs}
        seen = {i for doc in docs for bucket in doc.buckets for i in bucket.older + bucket.before} - set(batch)
        known = self._fetch(list(seen))
        dead: list[tuple[bytes, bytes, int]] = []  # (window, bucket, id) whose record has gone
        undecided = list(docs)
        pause = 0.002
        deadline = time.monotonic() + LEASE + 5
        while undecided:
            ready = []
            for doc in undecided:
                if self._candidates(doc, batch, known, dead):
                    ready.append(doc)
            for doc in ready:
                undecided.remove(doc)
                keep = doc.confirm is None or not doc.confirm(doc.candidates)
                doc.outcome = "kept" if keep else "duplicate"
            self._settle(ready, dead, log)
            dead = []
            if undecided:
                if time.monotonic() > deadline:  # cannot happen while leases expire
                    raise StoreUnavailable(
                        f"documents of other processes stayed undecided past their lease in {self.describe()}"
                    )
                time.sleep(pause)
                pause = min(0.05, pause * 1.5)
                known.update(self._fetch([i for doc in undecided for i in doc.waiting]))

    def _candidates(
        self, doc: _Doc, batch: dict[int, _Doc], known: dict[int, Any], dead: list[tuple[bytes, bytes, int]]
    ) -> bool:
        """Fill ``doc.candidates`` from what it saw; False while it waits for a document."""
        own = doc.record.doc_id
        doc.waiting = set()
        chosen: dict[int, DocRecord] = {}

        def live(bucket: _Bucket, limit: int | None = None) -> tuple[list[tuple[int, bool]], set[int]]:
            """The bucket's live members (up to ``limit``) as (id, kept), and the undecided
            higher ids it waits for."""
            out: list[tuple[int, bool]] = []
            waits: set[int] = set()
            for window_ids, window in ((bucket.older, None), (bucket.before, doc.windows[-1])):
                for other in window_ids:
                    if limit is not None and len(out) >= limit:
                        return out, waits
                    if other == own:
                        continue
                    mate = batch.get(other)
                    if mate is not None:
                        if mate.outcome == "duplicate" or other > own:
                            continue
                        record, kept = mate.record, mate.outcome == "kept"
                    else:
                        entry = known.get(other)
                        if entry is None:
                            if window is not None and other in known:
                                dead.append((window, bucket.name, other))
                            continue
                        status, record = entry
                        if other > own and status == UNDECIDED:
                            waits.add(other)
                            continue
                        kept = status == KEPT
                        if not kept:
                            record.state = PENDING  # not settled: not a committed copy yet
                    chosen.setdefault(other, record)
                    out.append((other, kept))
            return out, waits

        ids: list[int] = []
        for bucket in doc.buckets:
            if bucket.sentence:
                members, waits = live(bucket)
                evidence = sentence_evidence(members, doc.probe.boilerplate_limit)
                if evidence is not None:  # else boilerplate: what it holds changes nothing
                    ids += evidence
                    doc.waiting |= waits
            elif bucket.read:
                members, waits = live(bucket, doc.probe.bucket_read_limit)
                ids += [i for i, _ in members]
                doc.waiting |= waits
        if doc.waiting:
            return False
        doc.candidates = [chosen[i] for i in sorted(set(ids))]
        return True

    def _settle(self, docs: list[_Doc], dead: list[tuple[bytes, bytes, int]], log: list[Call]) -> None:
        """Step 5 for ``docs``: keep the new stories, take the duplicates out; and take out of
        their buckets the ids found whose records had gone."""
        keep: dict[int, tuple[list[bytes], list[Any]]] = {}
        drops: list[tuple[int, str]] = []
        unfile: list[tuple[bytes, bytes, int]] = list(dead)
        for doc in docs:
            record = doc.record
            if doc.outcome == "kept":
                filed = [key for key, bucket in zip(doc.probe.sentence_keys, doc.buckets) if bucket.filed]
                changed = filed != doc.planned_keys
                record.sentence_keys = filed
                slot = self._slot_of_id(record.doc_id)
                keys, args = keep.setdefault(slot, ([], []))
                keys += [self._record_key(record.doc_id), self._record_key(record.doc_id, b"x")]
                pending = record.state == PENDING
                expire = self._pending_ms if pending else self._ttl_ms
                args += [
                    _member(record.doc_id),
                    self._value(doc, KEPT) if changed else b"",
                    expire,
                    self._pending_ms if pending else 0,
                ]
                self._remember(record.doc_id, doc.windows, [b.name for b in doc.buckets if b.filed])
            else:
                drops.append((record.doc_id, ""))
                unfile += [(window, b.name, record.doc_id) for window in doc.windows for b in doc.buckets if b.file]
        calls = [
            self._script_call("keep", slot, [self._in_slot(slot, b"p"), *keys], args)
            for slot, (keys, args) in keep.items()
        ]
        calls += self._drop_calls(drops) + self._unfile_calls(unfile)
        replies = self._run(calls, log)
        gone = [
            int.from_bytes(args[4 * at], "big")
            for (keys, args), reply in zip(keep.values(), replies)
            for at, flag in enumerate(reply)
            if not flag
        ]
        if gone:
            raise StoreUnavailable(
                f"the records of documents {gone} vanished before their check ended (their lease of "
                f"{LEASE:.0f} s ran out: the process stalled): checked again when the store is called next"
            )

    def _drop_calls(self, drops: list[tuple[int, str]]) -> list[Call]:
        """cluster_drop calls for (id, id of a claimer whose claim goes too) pairs, by slot."""
        by_slot: dict[int, tuple[list[bytes], list[Any]]] = {}
        for doc_id, holder in drops:
            slot = self._slot_of_id(doc_id)
            keys, args = by_slot.setdefault(slot, ([], []))
            keys += [self._record_key(doc_id), self._record_key(doc_id, b"x"), self._record_key(doc_id, b"c")]
            args += [_member(doc_id), holder]
        return [
            self._script_call("drop", slot, [self._in_slot(slot, b"t"), self._in_slot(slot, b"p"), *keys], args)
            for slot, (keys, args) in by_slot.items()
        ]

    def _unfile_calls(self, entries: list[tuple[bytes, bytes, int]]) -> list[Call]:
        """cluster_unfile calls for (window, bucket, id) triples, by slot."""
        groups: dict[int, list[_ShardCall]] = {}
        shard_key = self._shard_keys()
        for window, bucket, doc_id in entries:
            shard = self._shard_of(bucket)
            call, index = _ShardCall.index(groups, self._slot_of_shard(shard), shard_key(window, shard))
            call.ops.append(b"%c%s%c%s" % (index, _member(doc_id), len(bucket), bucket))
        return [
            self._script_call("unfile", slot, list(call.keys), [b"".join(call.ops)])
            for slot, slot_calls in groups.items()
            for call in slot_calls
        ]

    # -- other documents' calls ---------------------------------------------------------

    def _remember(self, doc_id: int, windows: list[bytes], buckets: list[bytes]) -> None:
        self._filed_at[doc_id] = (windows, buckets)
        while len(self._filed_at) > _CACHE_SIZE:
            self._filed_at.popitem(last=False)

    def _where_filed(self, record: DocRecord | None) -> tuple[list[bytes], list[bytes]]:
        if record is None:
            return [], []
        cached = self._filed_at.get(record.doc_id)
        if cached is not None:
            return cached
        return self._windows_of(record.time), self.buckets_of(record)

    def remove(self, doc_id: int) -> None:
        self.remove_many([doc_id])

    def remove_many(self, doc_ids: list[int]) -> None:
        if not doc_ids:
            return
        self._after_fork()
        drops, unfile = self._removal_calls(doc_ids)
        releases = []
        for doc_id in doc_ids:
            old = self._replacing_old.pop(doc_id, None)
            if old is not None:  # its claim on the copy it was to replace goes, the copy stays
                releases.append(self._claim_call(old.doc_id, doc_id, "release"))
        log: list[Call] = []
        self._run(drops + unfile + releases, log)
        self._wait_replicas(log)

    def _removal_calls(self, doc_ids: list[int]) -> tuple[list[Call], list[Call]]:
        """The calls that take documents out of their records' slots, and out of their buckets."""
        found = self._fetch(doc_ids)
        drops, unfile = [], []
        for doc_id in doc_ids:
            entry = found.get(doc_id)
            windows, buckets = self._where_filed(entry[1] if entry else None)
            self._filed_at.pop(doc_id, None)
            drops.append((doc_id, ""))
            unfile += [(w, b, doc_id) for w in windows for b in buckets]
        return self._drop_calls(drops), self._unfile_calls(unfile)

    def remove_later(self, doc_ids: list[int]) -> None:
        self.remove_many(doc_ids)

    def commit(self, doc_id: int) -> None:
        self._after_fork()
        slot = self._slot_of_id(doc_id)
        log: list[Call] = []
        keys = [self._in_slot(slot, b"p"), self._record_key(doc_id), self._record_key(doc_id, b"x")]
        self._run([self._script_call("commit", slot, keys, [_member(doc_id), _STATE, self._ttl_ms])], log)
        old = self._replacing_old.pop(doc_id, None)
        if old is not None:  # the copy it replaces goes now
            self._take_out(old, holder=doc_id, log=log)
        self._filed_at.pop(doc_id, None)
        self._wait_replicas(log)

    def _take_out(self, old: DocRecord, holder: int, log: list[Call]) -> None:
        windows, buckets = self._where_filed(old)
        self._filed_at.pop(old.doc_id, None)
        calls = self._drop_calls([(old.doc_id, str(holder))])
        calls += self._unfile_calls([(w, b, old.doc_id) for w in windows for b in buckets])
        self._run(calls, log)

    def _claim_call(self, old_id: int, doc_id: int, action: str, gone: int | str = "") -> Call:
        slot = self._slot_of_id(old_id)
        keys = [self._record_key(old_id), self._record_key(old_id, b"c")]
        return self._script_call("claim", slot, keys, [doc_id, self._pending_ms, action, gone])

    def replace(self, record: DocRecord, old: DocRecord) -> int:
        """Take a stored copy's place in three one-slot steps: stamp the record with the copy's
        story, claim the copy (of two claimers, the first wins), then mark the record as the
        one replacing it; the copy goes at once (committed) or with :meth:`commit` (pending).

        The two slots cannot change in one step, so a reader may come between the steps: the
        stamp makes the record a copy of its story from the first step (the right
        ``similar_id``), and only the claimer marks it as replacing the copy, the mark that
        puts it before the copy (``Detector._best_match``). A copy that lost the claim waits
        for the claimer's mark, so that judged again it finds the claimer in the copy's place.
        A copy still undecided is waited for."""
        self._after_fork()
        log: list[Call] = []
        deadline = time.monotonic() + LEASE + 5
        if self._wait_until(old.doc_id, lambda entry: entry[0] == KEPT, deadline) is None:
            return GONE
        kept = record.story, record.replaces
        record.story = old.story_id
        if not self._rewrite(record, log):
            record.story, record.replaces = kept
            return GONE
        held = int(self._run([self._claim_call(old.doc_id, record.doc_id, "claim")], log)[0])
        if held > 0 and self._fetch([held]).get(held) is None:  # its claimer has gone
            held = int(self._run([self._claim_call(old.doc_id, record.doc_id, "claim", held)], log)[0])
        if held != REPLACED:  # the record is left as it was
            record.story, record.replaces = kept
            self._rewrite(record, log)
            if held > 0:
                self._wait_for_mark(held, old.doc_id, deadline)
            return held
        record.replaces = old.doc_id
        if not self._rewrite(record, log):
            record.story, record.replaces = kept
            self._run([self._claim_call(old.doc_id, record.doc_id, "release")], log)
            return GONE
        if record.state == COMMITTED:
            self._take_out(old, holder=record.doc_id, log=log)
        else:
            self._replacing_old[record.doc_id] = old
        self._wait_replicas(log)
        return REPLACED

    def _rewrite(self, record: DocRecord, log: list[Call]) -> bool:
        """Rewrite the record in place; False when it has gone."""
        slot = self._slot_of_id(record.doc_id)
        call = self._script_call("rewrite", slot, [self._record_key(record.doc_id)], [record.to_bytes()])
        return int(self._run([call], log)[0]) == 0

    def _wait_for_mark(self, holder: int, old_id: int, deadline: float) -> None:
        """Wait until the claimer ``holder`` is marked as replacing ``old_id``, or has gone."""
        self._wait_until(holder, lambda entry: entry[1].replaces == old_id, deadline)

    def _wait_until(
        self, doc_id: int, ready: Callable[[tuple[bytes, DocRecord]], bool], deadline: float
    ) -> tuple[bytes, DocRecord] | None:
        """The status and record of ``doc_id`` once ``ready`` says so or ``deadline`` has
        passed; None once it has gone."""
        while True:
            entry = self._fetch([doc_id]).get(doc_id)
            if entry is None or ready(entry) or time.monotonic() > deadline:
                return entry
            time.sleep(0.005)

    def get(self, doc_id: int) -> DocRecord | None:
        entry = self._fetch([doc_id]).get(doc_id)
        if entry is None:
            return None
        status, record = entry
        if status == UNDECIDED:
            record.state = PENDING
        return record

    def texts(self, doc_ids: list[int]) -> dict[int, str]:
        if not doc_ids:
            return {}
        replies = self._run([(self._slot_of_id(i), ("GET", self._record_key(i, b"x"))) for i in doc_ids])
        return {doc_id: unpack_text(data) for doc_id, data in zip(doc_ids, replies) if data is not None}

    def find_candidates(self, probes: list[Probe]) -> list[list[DocRecord]]:
        """Each probe's candidates, read without changing the store."""
        if not probes:
            return []
        self._after_fork()
        windows = self._read_windows(time.time())
        calls, where = [], []
        for number, probe in enumerate(probes):
            names = [(sentence_bucket(k), True) for k in probe.sentence_keys] + [
                (b, False) for b in probe.simhash_buckets
            ]
            for position, (name, sentence) in enumerate(names):
                for window in windows:
                    calls.append(self._hget(window, name))
                    where.append((number, position, sentence))
        members: dict[tuple[int, int], list[int]] = {}
        flags: dict[tuple[int, int], bool] = {}
        for (number, position, sentence), value in zip(where, self._run(calls)):
            members.setdefault((number, position), []).extend(_ids(value or b""))
            flags[(number, position)] = sentence
        known = self._fetch([i for ids in members.values() for i in ids])
        answers: list[list[DocRecord]] = [[] for _ in probes]
        for number, probe in enumerate(probes):
            chosen: dict[int, DocRecord] = {}
            for position in range(len(probe.sentence_keys) + len(probe.simhash_buckets)):
                ids = members.get((number, position), [])
                sentence = flags.get((number, position), True)
                live = [(i, known[i][0] == KEPT) for i in ids if known.get(i) is not None]  # type: ignore[index]
                if sentence:
                    evidence = sentence_evidence(live, probe.boilerplate_limit)
                else:
                    evidence = [i for i, _ in live[: probe.bucket_read_limit]]
                for i in evidence or []:
                    status, record = known[i]  # type: ignore[misc]
                    if status == UNDECIDED:
                        record.state = PENDING
                    chosen.setdefault(i, record)
            answers[number] = [chosen[i] for i in sorted(chosen)]
        return answers

    # -- the time index -------------------------------------------------------------------

    def count(self) -> int:
        self._after_fork()
        cutoff = self._cutoff(time.time())
        calls = [
            self._script_call("count", slot, [self._in_slot(slot, b"t"), self._in_slot(slot, b"p")], [cutoff])
            for slot in self._used_slots()
        ]
        return sum(int(n) for n in self._run(calls))

    def _index_pages(
        self, slots: list[int], starts: dict[int, int], size: int, older_than: float | None = None
    ) -> dict[int, list[tuple[float, int]]]:
        """The next ``size`` (time, id) pairs of each slot's time index (from ``starts``)."""
        calls: list[Call] = []
        for slot in slots:
            key = self._in_slot(slot, b"t")
            if older_than is None:
                calls.append((slot, ("ZRANGE", key, starts.get(slot, 0), starts.get(slot, 0) + size - 1, "WITHSCORES")))
            else:
                calls.append((slot, ("ZRANGEBYSCORE", key, "-inf", f"({older_than!r}", "WITHSCORES", "LIMIT", 0, size)))
        pages = {}
        for slot, reply in zip(slots, self._run(calls)):
            pairs = (
                reply if reply and isinstance(reply[0], list) else list(zip(reply[::2], reply[1::2]))
            )  # RESP3, RESP2
            pages[slot] = [(float(score), int.from_bytes(member, "big")) for member, score in pairs]
        return pages

    def records(self) -> Iterator[DocRecord]:
        """Records in time order: each slot's time index, merged, read a page at a time."""
        self._after_fork()
        size = 200
        first = self._index_pages(list(self._used_slots()), {}, size)

        def slot_pairs(slot: int) -> Iterator[tuple[float, int]]:
            page, start = first[slot], 0
            while page:
                yield from page
                if len(page) < size:
                    return
                start += size
                page = self._index_pages([slot], {slot: start}, size)[slot]

        chunk: list[int] = []
        for _, doc_id in heapq.merge(*(slot_pairs(slot) for slot in first if first[slot])):
            chunk.append(doc_id)
            if len(chunk) == 500:
                yield from self._records_of(chunk)
                chunk = []
        yield from self._records_of(chunk)

    def _records_of(self, doc_ids: list[int]) -> list[DocRecord]:
        found = self._fetch(doc_ids)
        out = []
        for doc_id in doc_ids:
            entry = found.get(doc_id)
            if entry is not None:
                status, record = entry
                if status == UNDECIDED:
                    record.state = PENDING
                out.append(record)
        return out

    def purge(self, older_than: float, background: bool = False) -> int:
        """Remove documents older than ``older_than`` with their bucket entries, in batches of
        :data:`PURGE_BATCH` documents: a batch reads a page from each of :data:`PURGE_SLOTS`
        slots' time indexes at a time, the slots in turn, until it holds that many or every
        slot was read. A batch is counted in documents, not slots: its bucket entries are
        spread over every slot whatever slots its records are in, so a batch of few documents
        costs a call to every slot for little. A ``background`` purge, beside crawlers sharing
        the cluster, rests after each batch (:class:`~scrapy_neardup.stores.pacing.Pace`), so
        that they keep most of the masters' time."""
        self._after_fork()
        pace = Pace() if background else None
        removed, slots = 0, list(self._used_slots())
        while slots:
            ids: list[int] = []
            more: list[int] = []  # slots with more to read once this batch's ids are out
            while slots and len(ids) < PURGE_BATCH:
                group, slots = slots[:PURGE_SLOTS], slots[PURGE_SLOTS:]
                pages = self._index_pages(group, {}, PURGE_PAGE, older_than)
                ids += [doc_id for page in pages.values() for _, doc_id in page]
                more += [slot for slot, page in pages.items() if len(page) == PURGE_PAGE]
            if ids:
                removed += self._purge_ids(ids)
            slots += more
            if pace is not None:
                pace.rest()
        return removed

    def _purge_ids(self, ids: list[int]) -> int:
        """Take the documents ``ids`` out of their records' slots and their buckets; how many
        were there."""
        drops, unfile = self._removal_calls(ids)
        log: list[Call] = []
        replies = self._run(drops, log)
        self._run(unfile, log)
        self._wait_replicas(log)
        return sum(int(existed) for reply in replies for existed in reply)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._mark:  # opened: what it held now is this machine's receipt
            receipts.record(self)
        self._router.close()
        self.client.close()
