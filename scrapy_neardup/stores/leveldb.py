"""``leveldb:///path``: the embedded default store, on disk, for one crawler process.

Layout inside a namespace (all integers big-endian, so prefix scans come out in order)::

    m                 -> format version and recipe (JSON)
    n                 -> last document id
    d <id>            -> document record
    b <bucket>        -> the ids of its documents, 8 bytes each, oldest first
    t <time> <id>     -> ''   (time index, so purging old documents is a range scan)
    p <id>            -> ''   (pending reservations; a new run drops what a dead run left)
    f                 -> Bloom filter of the buckets, saved on close (bucketfilter.py)

Every change of one document is one write batch, so a process killed at any moment leaves
either all or none of it. The saved filter names the last document id it covers; when that
is not the store's last id (a run that died, an older version wrote) it is built again.
"""

from __future__ import annotations

import functools
import os
import struct
import threading
from typing import Iterable

from ..record import COMMITTED, PENDING, DocRecord
from .bucketfilter import BucketFilter
from .base import (
    Confirm,
    LocalStore,
    Probe,
    Reservation,
    StoreUnavailable,
    decode_meta,
    encode_meta,
)

try:
    import plyvel
except ImportError as exc:  # pragma: no cover - plyvel is a core dependency
    plyvel = None
    _PLYVEL_ERROR: ImportError | None = exc
else:
    _PLYVEL_ERROR = None

_ID = 8
_BUCKET_CAP = 1000  # a bucket this full (a degenerate SimHash) takes no more members
# Most bucket reads ask for a key that is not there (a new story): a bloom filter answers
# those without reading a table block, which keeps lookups flat as the store grows.
_DB_OPTIONS = dict(
    create_if_missing=True,
    bloom_filter_bits=10,
    lru_cache_size=64 << 20,
    write_buffer_size=32 << 20,
)


class _Shared:
    """One open DB per path in a process, shared by its stores (spiders), with its counters."""

    def __init__(self, db) -> None:
        self.db = db
        self.users = 0
        self.last_ids: dict[bytes, list[int]] = {}  # namespace prefix -> [last document id]
        self.filters: dict[bytes, BucketFilter] = {}  # namespace prefix -> its buckets


_OPEN: dict[str, _Shared] = {}
_LOCK = threading.Lock()


def _u64(value: int) -> bytes:
    return value.to_bytes(_ID, "big")


def _unpack(packed: bytes, limit: int) -> list[int]:
    """The first ``limit`` ids of a bucket value."""
    return list(_ids_struct(min(limit, len(packed) // _ID)).unpack_from(packed))


@functools.lru_cache(maxsize=None)
def _ids_struct(count: int) -> struct.Struct:
    return struct.Struct(f">{count}Q")


def _ids(packed: bytes) -> list[bytes]:
    return [packed[i : i + _ID] for i in range(0, len(packed), _ID)]


def _open_db(path: str) -> _Shared:
    if plyvel is None:
        raise StoreUnavailable(
            f"the leveldb:// store needs plyvel, which failed to import ({_PLYVEL_ERROR}); "
            "pip install plyvel, or use a redis:// or memory:// store"
        )
    with _LOCK:
        entry = _OPEN.get(path)
        if entry is None:
            try:
                os.makedirs(path, exist_ok=True)
                db = plyvel.DB(path, **_DB_OPTIONS)
            except plyvel.IOError as exc:
                if "lock" in str(exc).lower():
                    raise StoreUnavailable(
                        f"LevelDB store {path} is held by another process (LevelDB allows one "
                        "process at a time); stop that process, use another NEARDUP_STORE path, "
                        "or use a redis:// store for crawls that run in several processes"
                    ) from exc
                raise StoreUnavailable(f"cannot open LevelDB store {path}: {exc}") from exc
            except (plyvel.Error, OSError) as exc:
                raise StoreUnavailable(f"cannot open LevelDB store {path}: {exc}") from exc
            entry = _OPEN[path] = _Shared(db)
        entry.users += 1
        return entry


def _save_filters(entry: _Shared) -> None:
    """Save each changed bucket filter with the last id it covers; a failure costs a rebuild."""
    for prefix, bucket_filter in entry.filters.items():
        if bucket_filter.unsaved:
            bucket_filter.last_id = entry.last_ids[prefix][0]
            try:
                entry.db.put(prefix + b"f", bucket_filter.to_bytes())
            except plyvel.Error:
                pass


def _close_db(path: str) -> None:
    with _LOCK:
        entry = _OPEN.get(path)
        if entry is None:
            return
        entry.users -= 1
        if entry.users <= 0:
            if not entry.db.closed:
                _save_filters(entry)
            entry.db.close()
            del _OPEN[path]


class LevelDBStore(LocalStore):
    def __init__(self, path: str, namespace: str = "default", uri: str | None = None):
        self.path = os.path.abspath(path)
        self.uri = uri or f"leveldb://{self.path}"
        self.namespace = namespace
        self._shared = _open_db(self.path)
        prefix = b"ns:" + namespace.encode("utf-8") + b"\x00"
        self._db = self._shared.db.prefixed_db(prefix)
        # The lookups of a check go to the DB itself with the prefix spelled out: a get
        # through the prefixed view costs a second Python-level call.
        self._get = self._shared.db.get
        self._bucket_prefix = prefix + b"b"
        self._doc_prefix = prefix + b"d"
        self._closed = False
        if prefix not in self._shared.last_ids:
            last = self._db.get(b"n")
            self._shared.last_ids[prefix] = [int.from_bytes(last, "big") if last else 0]
        self._last = self._shared.last_ids[prefix]
        self._prefix = prefix
        self._read: dict[bytes, bytes] = {}  # buckets read by the check in progress

    def open(self, recipe) -> None:
        super().open(recipe)
        if self._prefix not in self._shared.filters:  # once the format is known to be ours
            saved = self._db.get(b"f")
            found = BucketFilter.from_bytes(saved) if saved else None
            if found is None or found.last_id != self._last[0]:
                found = self._build_filter()
            self._shared.filters[self._prefix] = found
        self._drop_stale_reservations()

    def _drop_stale_reservations(self) -> None:
        """Pending documents of a run that died before its items were stored are not real."""
        if self._shared.users > 1:
            return  # another spider of this process shares the DB: its reservations are live
        for key, _ in self._db.iterator(prefix=b"p"):
            self.remove(int.from_bytes(key[1:], "big"))

    def _read_meta(self) -> dict | None:
        return decode_meta(self._db.get(b"m"))

    def _write_meta(self, meta: dict) -> None:
        self._db.put(b"m", encode_meta(meta))

    def check_and_add(
        self, probe: Probe, record: DocRecord, confirm: Confirm | None = None
    ) -> Reservation:
        self._read = {}  # what an earlier check read may have changed since
        return super().check_and_add(probe, record, confirm)

    def _members(self, bucket: bytes, limit: int) -> list[int]:
        return self._members_of([bucket], limit)[0]

    def _build_filter(self) -> BucketFilter:
        """A filter of every bucket of the namespace (a scan); new buckets go to a new layer."""
        capacity = sum(1 for _ in self._db.iterator(prefix=b"b", include_value=False))
        made = BucketFilter(capacity, self._last[0])
        made.add_all(key[1:] for key in self._db.iterator(prefix=b"b", include_value=False))
        return made

    def _members_of(self, buckets: list[bytes], limit: int) -> list[list[int]]:
        get, prefix = self._get, self._bucket_prefix
        held = self._shared.filters[self._prefix].may_hold_each(buckets)
        values = [get(prefix + bucket, b"") if may else b"" for bucket, may in zip(buckets, held)]
        self._read.update(zip(buckets, values))  # _save appends to them without reading again
        return [_unpack(packed, limit) if packed else [] for packed in values]

    def _records(self, doc_ids: Iterable[int]) -> list[DocRecord]:
        get, prefix = self._get, self._doc_prefix
        found = [get(prefix + _u64(doc_id)) for doc_id in doc_ids]
        return [DocRecord.from_bytes(data) for data in found if data is not None]

    def _next_id(self) -> int:
        self._last[0] += 1
        return self._last[0]

    def _save(self, record: DocRecord, buckets: list[bytes]) -> None:
        """Write a new document and file it under ``buckets``.

        Its id is new (ids are never reused), so it is in no bucket and has no pending mark yet.
        """
        doc = _u64(record.doc_id)
        read, self._read = self._read, {}
        # Before the write: the filter never misses a stored bucket.
        self._shared.filters[self._prefix].add_all(buckets)
        with self._db.write_batch() as batch:
            batch.put(b"d" + doc, record.to_bytes())
            batch.put(b"n", _u64(self._last[0]))
            batch.put(b"t" + _u64(int(record.time)) + doc, b"")
            if record.state == PENDING:
                batch.put(b"p" + doc, b"")
            for bucket in buckets:
                packed = read[bucket] if bucket in read else self._db.get(b"b" + bucket, b"")
                if len(packed) < _BUCKET_CAP * _ID:
                    batch.put(b"b" + bucket, packed + doc)

    def commit(self, doc_id: int) -> None:
        """Only the record and the pending mark change: a new document's write has no delete."""
        record = self.get(doc_id)
        if record is not None and record.state == PENDING:
            record.state = COMMITTED
            doc = _u64(doc_id)
            with self._db.write_batch() as batch:
                batch.put(b"d" + doc, record.to_bytes())
                batch.delete(b"p" + doc)

    def _delete(self, record: DocRecord, buckets: list[bytes]) -> None:
        doc = _u64(record.doc_id)
        with self._db.write_batch() as batch:
            batch.delete(b"d" + doc)
            batch.delete(b"t" + _u64(int(record.time)) + doc)
            batch.delete(b"p" + doc)
            for bucket in buckets:
                packed = self._db.get(b"b" + bucket)
                if packed:
                    kept = b"".join(i for i in _ids(packed) if i != doc)
                    if kept:
                        batch.put(b"b" + bucket, kept)
                    else:
                        batch.delete(b"b" + bucket)

    def purge(self, older_than: float) -> int:
        removed = 0
        stop = b"t" + _u64(max(0, int(older_than)))
        old = [key[-_ID:] for key, _ in self._db.iterator(start=b"t", stop=stop)]
        for doc in old:
            self.remove(int.from_bytes(doc, "big"))
            removed += 1
        return removed

    def count(self) -> int:
        return sum(1 for _ in self._db.iterator(prefix=b"d", include_value=False))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            _close_db(self.path)
