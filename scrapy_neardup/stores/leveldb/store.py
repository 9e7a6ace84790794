"""``leveldb:///path``: the embedded default store, on disk, for one crawler process.

Layout inside a namespace (all integers big-endian, so prefix scans come out in order)::

    m                 -> format version and recipe (JSON)
    n                 -> last document id (written at close and with every removal)
    d <id>            -> document record
    x <id>            -> its text, zlib-compressed (only when kept: NEARDUP_KEEP_TEXT)
    p <id>            -> ''   (pending reservations; a new run drops what a dead run left)

A new document writes only its record (and its pending mark): ids grow, so LevelDB's files
hold disjoint runs of records and compaction moves them instead of merging them again and
again, as any extra key written per document (a counter, a time index) would make it do.
At open the last id is the larger of ``n`` and the highest record or pending id; ``n`` is
written with each removal, so an id is never given out twice. Ids
follow arrival order, so purging old documents reads records from the lowest id on.

The buckets (sentence hash or SimHash table key -> documents) are an index of their own
beside the DB, one folder a namespace (tieredindex.py): the newest documents in memory, the
others in sorted runs on disk, written by a thread of the index. A record names its buckets,
so the documents the index's runs do not cover yet (a run that was killed) are filed again at
open, in id order; without a usable index, all of them. A store whose index is still the
single file of earlier versions (``neardup-index-*.bin``) has it turned into a run at open.

Every change of one document is one write batch, so a process killed at any moment leaves
either all or none of it.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar
from urllib.parse import unquote

import xxhash

from .. import receipts
from ..base import LocalStore, Probe, StoreError, StoreUnavailable, decode_meta, encode_meta
from ..pacing import Pace
from ..record import COMMITTED, HEAD_SIZE, PENDING, DocRecord, pack_text, passed_over, unpack_text
from .bucketindex import BucketIndex
from .bucketruns import RunDamaged
from .openfiles import raise_open_files_limit
from .simhashes import SimHashes
from .tieredindex import IndexDamaged, TieredIndex

try:
    import plyvel
except ImportError as exc:  # pragma: no cover - plyvel is a core dependency
    plyvel = None
    _PLYVEL_ERROR: ImportError | None = exc
else:
    _PLYVEL_ERROR = None

# What a read or write of the files can raise: plyvel's errors (IOError, CorruptionError...),
# and the OS's while the bucket index is saved or loaded.
_FAILURES: tuple[type[BaseException], ...] = (plyvel.Error, OSError) if plyvel else (OSError,)

logger = logging.getLogger(__name__)

_ID = 8
_STATE = HEAD_SIZE - 2  # a record's state byte: the next to last of its head
PURGE_BATCH = 10_000  # documents a write batch of purge deletes
COMPACT_SLICE = 200_000  # ids a background purge compacts at a time
# Record reads are of ids that exist; the bloom filter saves a block read per level missed.
# LevelDB maps its first 1,000 open table files into memory (their pages count in RSS) and
# reads the others through its block cache (lru_cache_size). Records come in id order, so
# compaction mostly moves the tables a write buffer makes: small write buffers make tables of
# 0.5-1 MB (LevelDB merges into tables of at least 1 MB), which bounds the mapped part at about
# 1 GB whatever the store's size; tables of 32 MB let it grow with the store. Every table stays
# open (max_open_files): a read that has to open its table again costs ten times more.
_DB_OPTIONS = {
    "create_if_missing": True,
    "bloom_filter_bits": 10,
    "lru_cache_size": 64 << 20,
    "write_buffer_size": 512 << 10,
    "max_file_size": 512 << 10,
    "max_open_files": 50_000,
}
# Reads check block checksums, so a garbled table is an error rather than records read wrong.
# Not paranoid_checks: it also refuses to open a database whose log ends in a torn write, which
# is what a killed run leaves.
_VERIFY = True


class _Shared:
    """One open DB per path in a process, shared by its stores (spiders), with its counters."""

    def __init__(self, db) -> None:
        self.db = db
        self.users = 0
        self.last_ids: dict[bytes, list[int]] = {}  # namespace prefix -> [last document id]
        self.indexes: dict[bytes, TieredIndex] = {}  # namespace prefix -> its buckets
        self.simhashes: dict[bytes, SimHashes] = {}  # namespace prefix -> its documents' SimHashes
        # namespace prefix -> copies being replaced -> the pending copy replacing each; like
        # the pending copies themselves, they do not outlive the process
        self.claims: dict[bytes, dict[int, int]] = {}
        self.purging = threading.Lock()  # held by a purge, which may run in a thread of its own
        self.closing = threading.Event()  # a purge stops at its next batch


class LevelDBError(StoreError):
    """The store's LevelDB files cannot be read or written (damaged, incomplete, or the disk is
    full); the message names the folder and what to do."""


# Files LevelDB writes in its folder, besides CURRENT (which names the live MANIFEST).
_LEVELDB_FILE = re.compile(r"\d+\.(ldb|sst|log)|MANIFEST-\d+|LOCK|LOG|LOG\.old")


def _repair_advice(path: str) -> str:
    return (
        "stop every process using it, copy the folder aside, then rebuild it with "
        f'python -c "import plyvel; plyvel.repair_db({path!r})" (repair keeps every readable '
        "record) and open it again"
    )


def _detail(exc: BaseException) -> str:
    """plyvel's message (bytes) as text."""
    message = exc.args[0] if exc.args else ""
    return message.decode("utf-8", "replace") if isinstance(message, bytes) else str(exc)


def _failure(path: str, exc: BaseException) -> LevelDBError:
    """The store's own error for a failed read or write of the files at ``path``."""
    detail = _detail(exc)
    if isinstance(exc, RunDamaged):
        return LevelDBError(
            f"the bucket index of LevelDB store {path} is damaged ({detail}): stop every process "
            "using the store and delete its neardup-index-* folders; the next open files every "
            "document again from its record"
        )
    if getattr(exc, "errno", None) == errno.ENOSPC or "No space left" in detail:
        return LevelDBError(
            f"no space left on the device holding the store at {path}: free space there and "
            "run again; what was stored before is kept"
        )
    if _not_writable(exc):
        return _read_only(path, exc)
    if isinstance(exc, plyvel.CorruptionError) or "Corruption" in detail:
        return LevelDBError(f"LevelDB store {path} is damaged ({detail}): {_repair_advice(path)}")
    return LevelDBError(
        f"cannot read or write LevelDB store {path} ({detail}): check the disk and the folder's "
        f"permissions; if its files are damaged, {_repair_advice(path)}"
    )


Method = TypeVar("Method", bound=Callable)


def _guarded(method: Method) -> Method:
    """Raise the store's own error, naming its folder, for plyvel's and the OS's."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except _FAILURES as exc:
            raise _failure(self.path, exc) from exc

    return guarded  # type: ignore[return-value]


def _refuse_headless(path: str) -> None:
    """Told to create a missing database, LevelDB starts a new one in a folder that lost its
    CURRENT file and deletes the old table files with it: refuse before plyvel sees it."""
    if os.path.exists(os.path.join(path, "CURRENT")):
        return
    found = sorted(name for name in os.listdir(path) if _LEVELDB_FILE.fullmatch(name))
    if found:
        raise LevelDBError(
            f"LevelDB store {path} holds LevelDB files ({', '.join(found[:4])}"
            f"{', ...' if len(found) > 4 else ''}) but no CURRENT file; opening it would start "
            f"an empty database and delete them, so nothing was changed: {_repair_advice(path)}"
        )


def _refuse_foreign(path: str) -> None:
    """A new store is made only in an empty folder (or one holding only a store's own files):
    LevelDB would write its files among others (and rotate a file named LOG), and a folder named
    by mistake, a home or a data folder, would have the store's files mixed into it."""
    if os.path.exists(os.path.join(path, "CURRENT")):
        return
    foreign = sorted(
        name for name in os.listdir(path) if not (_LEVELDB_FILE.fullmatch(name) or name.startswith("neardup-index-"))
    )
    if foreign:
        raise LevelDBError(
            f"LevelDB store folder {path} holds files that are not a store's ({', '.join(map(repr, foreign[:4]))}"
            f"{', ...' if len(foreign) > 4 else ''}): a new store is made only in a new or empty folder, "
            "so nothing was written there; name another folder (NEARDUP_STORE, or --store)"
        )


def _cannot_create(path: str, exc: OSError) -> LevelDBError:
    """A store folder that does not exist and cannot be made: nothing to repair."""
    where = f" ({exc.filename})" if exc.filename and exc.filename != path else ""
    return LevelDBError(
        f"cannot create the LevelDB store folder {path}: {exc.strerror or exc}{where}; create it, or "
        "choose a folder under one this process can write (NEARDUP_STORE, or --store)"
    )


def _not_writable(exc: BaseException) -> bool:
    """plyvel's or the OS's error for a folder or file this process may not write."""
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return True
    detail = _detail(exc)
    return "Permission denied" in detail or "Read-only file system" in detail


def _read_only(path: str, exc: BaseException) -> LevelDBError:
    """A store folder (or its files) this process may not write: nothing is damaged."""
    return LevelDBError(
        f"LevelDB store {path} cannot be written by this process ({_detail(exc)}): LevelDB writes a "
        "lock file and a log in the store's folder even to read it, so the folder and its files must "
        "be writable; change their owner or permissions (or remount the disk read-write), or copy the "
        "folder to a place this process can write"
    )


_OPEN: dict[str, _Shared] = {}
_LOCK = threading.Lock()


def _u64(value: int) -> bytes:
    return value.to_bytes(_ID, "big")


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
            except OSError as exc:
                raise _cannot_create(path, exc) from exc
            try:
                _refuse_foreign(path)
                _refuse_headless(path)
                raise_open_files_limit()  # LevelDB reads it when a process opens its first database
                db = plyvel.DB(path, **_DB_OPTIONS)
            except _FAILURES as exc:
                if "IO error: lock " in _detail(exc):
                    raise StoreUnavailable(
                        f"LevelDB store {path} is held by another process (LevelDB allows one "
                        "process at a time); stop that process, use another store path "
                        "(NEARDUP_STORE, or --store of the neardup command), or use a redis:// "
                        "store for crawls that run in several processes"
                    ) from exc
                raise _failure(path, exc) from exc
            entry = _OPEN[path] = _Shared(db)
        entry.users += 1
        return entry


def index_folder(db_path: str, prefix: bytes) -> str:
    """Where a namespace's bucket index is kept: beside LevelDB's own files."""
    return os.path.join(db_path, f"neardup-index-{xxhash.xxh64_hexdigest(prefix)}")


def index_path(db_path: str, prefix: bytes) -> str:
    """Where earlier versions saved a namespace's bucket index, as one file."""
    return index_folder(db_path, prefix) + ".bin"


def _save_indexes(path: str, entry: _Shared) -> None:
    """Close each bucket index, writing its table as a run, with its documents' SimHashes; a
    failure costs a refiling at open (the SimHashes: record reads until they are known again)."""
    for prefix, index in entry.indexes.items():
        try:
            index.close()
            if prefix in entry.simhashes:
                entry.simhashes[prefix].save(index.folder)
        except OSError as exc:
            logger.warning(
                "LevelDB store %s: bucket index not saved (%s); the next open files the documents "
                "again from their records",
                path,
                exc,
            )


def _append_simhashes(simhashes: SimHashes, folder: str, upto: int) -> None:
    """After a flush of the bucket index: a run killed later keeps the SimHashes it covers."""
    try:
        simhashes.append_upto(folder, upto)
    except OSError as exc:
        logger.debug("SimHashes in %s not saved (%s); they are saved again at close", folder, exc)


def _save_counters(entry: _Shared) -> None:
    """A clean close saves each namespace's last id (a killed run's is found at open)."""
    for prefix, last in entry.last_ids.items():
        try:
            entry.db.put(prefix + b"n", _u64(last[0]))
        except plyvel.Error:
            pass  # the next open finds the last id from the records and reservations


def _close_db(path: str) -> None:
    with _LOCK:
        entry = _OPEN.get(path)
        if entry is None:
            return
        entry.users -= 1
        if entry.users <= 0:
            entry.closing.set()
            with entry.purging:  # a purge in another thread ends its batch first
                pass
            if not entry.db.closed:
                _save_counters(entry)
                _save_indexes(path, entry)
            entry.db.close()
            del _OPEN[path]


def _path_of(uri: str) -> str:
    """The folder of ``leveldb:///absolute/path``, ``leveldb://relative/path`` or a bare path."""
    return unquote(uri[len("leveldb://") :]) if "://" in uri else uri


class LevelDBStore(LocalStore):
    # 1 kept the buckets as LevelDB keys, 2 a time index and a counter per write; 4 files each
    # document under its key too; 5 records hold story words, figures and sketch places; 6
    # records may hold their sketch's hashes packed (stores of 5 read as they are)
    format_version = 6
    reads_formats = (5,)

    @classmethod
    def from_uri(cls, uri: str, namespace: str = "default", create: bool = True, **options: Any) -> LevelDBStore:
        """``leveldb:///absolute/path``, ``leveldb://relative/path`` or a bare path. With
        ``create`` False a folder without a LevelDB database is refused, not made one."""
        path = _path_of(uri)
        if not path:
            raise StoreError(f"store URI {uri!r} names no directory: leveldb:///path/to/dir")
        if not create and not os.path.exists(os.path.join(path, "CURRENT")):
            raise StoreUnavailable(f"there is no LevelDB store at {os.path.abspath(path)}: check --store")
        return cls(path, namespace, uri=uri if "://" in uri else None)

    @classmethod
    def folder_of(cls, uri: str) -> str | None:
        path = _path_of(uri)
        return os.path.abspath(path) if path else None

    def __init__(self, path: str, namespace: str = "default", uri: str | None = None):
        self.path = os.path.abspath(path)
        self.uri = uri or f"leveldb://{self.path}"
        self.namespace = namespace
        self._shared = _open_db(self.path)
        try:
            self._attach(namespace)
        except BaseException:
            _close_db(self.path)
            raise

    def _attach(self, namespace: str) -> None:
        prefix = b"ns:" + namespace.encode("utf-8") + b"\x00"
        self._db = self._shared.db.prefixed_db(prefix)
        # Record reads go to the DB itself with the prefix spelled out: a get through the
        # prefixed view costs a second Python-level call.
        self._get = self._shared.db.get
        self._doc_prefix = prefix + b"d"
        self._closed = False
        if prefix not in self._shared.last_ids:
            self._shared.last_ids[prefix] = [self._highest_id()]
        self._last = self._shared.last_ids[prefix]
        self._prefix = prefix
        # Known once the store is open (open() loads them); a read before that learns nothing.
        self._simhashes = self._shared.simhashes.get(prefix, SimHashes())

    def open(self, recipe, create: bool = True) -> None:
        super().open(recipe, create)
        if self._prefix not in self._shared.indexes:  # once the format is known to be ours
            folder = index_folder(self.path, self._prefix)
            self._simhashes = SimHashes.load(folder, self._last[0])
            self._shared.simhashes[self._prefix] = self._simhashes
            self._shared.indexes[self._prefix] = self._load_index()
            self._shared.indexes[self._prefix].on_flush = functools.partial(_append_simhashes, self._simhashes, folder)
        self._index = self._shared.indexes[self._prefix]
        self._simhashes = self._shared.simhashes[self._prefix]
        self._drop_stale_reservations()

    @_guarded
    def _highest_id(self) -> int:
        """The last id given out: the saved counter, or a later record or reservation."""
        saved = self._db.get(b"n", verify_checksums=_VERIFY)
        ids = [int.from_bytes(saved, "big") if saved else 0]
        for family in (b"d", b"p"):
            for key in self._db.iterator(prefix=family, reverse=True, include_value=False, verify_checksums=_VERIFY):
                ids.append(int.from_bytes(key[1:], "big"))
                break
        return max(ids)

    @_guarded
    def _load_index(self) -> TieredIndex:
        """The saved index, with the documents its runs do not cover filed again from their
        records; a new one filed from all of them when it is missing, damaged, or newer than
        the records (a store restored from an older copy)."""
        folder = index_folder(self.path, self._prefix)
        try:
            index = TieredIndex.open(folder)
            if index.flushed_upto > self._last[0]:
                index.close()
                raise IndexDamaged(f"bucket index {folder} covers documents the store does not hold")
        except IndexDamaged as exc:
            if os.path.exists(folder):
                logger.warning("%s: %s; filing every document again from its record", self.describe(), exc)
            index = TieredIndex.create(folder)
            self._import_saved_table(index)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(index_path(self.path, self._prefix))  # an earlier version's index, now stale
        started, filed = time.perf_counter(), 0
        index.start(self._lowest_id())
        recent = self._db.iterator(start=b"d" + _u64(index.flushed_upto + 1), stop=b"e", verify_checksums=_VERIFY)
        for _, data in recent:
            record = DocRecord.from_bytes(data)
            buckets = self.buckets_of(record)
            self._simhashes.put(record.doc_id, record.simhash, buckets)
            index.add(buckets, record.doc_id)
            filed += 1
        if filed:  # a run that did not close the store: say why opening took long
            logger.info(
                "%s: filed %d documents written after the saved bucket index in %.1f s",
                self.describe(),
                filed,
                time.perf_counter() - started,
            )
        return index

    def _import_saved_table(self, index: TieredIndex) -> None:
        """The single-file index of earlier versions, if whole and not newer than the records,
        written as the new index's first run."""
        table = BucketIndex.load(index_path(self.path, self._prefix))
        if table is not None and 0 < table.last_id <= self._last[0]:
            index.frozen, index.frozen_upto, index.highest = table, table.last_id, table.last_id
            index._flush_frozen()

    def _lowest_id(self) -> int:
        """The lowest id of a stored record: every id below it is gone."""
        for key in self._db.iterator(prefix=b"d", include_value=False, verify_checksums=_VERIFY):
            return int.from_bytes(key[1:], "big")
        return self._last[0] + 1

    @_guarded
    def _drop_stale_reservations(self) -> None:
        """Pending documents of a run that died before its items were stored are not real."""
        if self._shared.users > 1:
            return  # another spider of this process shares the DB: its reservations are live
        for key, _ in self._db.iterator(prefix=b"p", verify_checksums=_VERIFY):
            self.remove(int.from_bytes(key[1:], "big"))

    @_guarded
    def read_meta(self) -> dict | None:
        return decode_meta(self._db.get(b"m", verify_checksums=_VERIFY), self.describe())

    @_guarded
    def write_meta(self, meta: dict) -> None:
        self._db.put(b"m", encode_meta(meta))

    def _claims(self) -> dict[int, int]:
        return self._shared.claims.setdefault(self._prefix, {})

    @_guarded
    def _members(self, bucket: bytes, limit: int) -> list[int]:
        return self._index.members_each([bucket], limit, self._simhashes)[0]

    @_guarded
    def _members_of(self, buckets: list[bytes], limit: int) -> list[list[int]]:
        return self._index.members_each(buckets, limit, self._simhashes)

    @_guarded
    def _records(self, doc_ids: Iterable[int]) -> list[DocRecord]:
        return self._decoded(self._encoded(doc_ids))

    @_guarded
    def _candidate_records(self, doc_ids: set[int], probe: Probe, record: DocRecord) -> list[DocRecord]:
        keys, key = set(probe.sentence_keys), record.key.encode("utf-8", "surrogatepass")
        distance = self.recipe.simhash_k
        return self._decoded(
            [data for data in self._encoded(doc_ids) if not passed_over(data, keys, record.simhash, distance, key)]
        )

    def _encoded(self, doc_ids: Iterable[int]) -> list[bytes]:
        get, prefix = self._get, self._doc_prefix
        found = [get(prefix + _u64(doc_id), verify_checksums=_VERIFY) for doc_id in doc_ids]
        return [data for data in found if data is not None]

    def _decoded(self, found: list[bytes]) -> list[DocRecord]:
        records = [DocRecord.from_bytes(data) for data in found]
        for record in records:  # a store saved by an earlier version learns them as it reads
            if not self._simhashes.knows(record.doc_id):
                self._simhashes.put(record.doc_id, record.simhash, self.buckets_of(record))
        return records

    def _next_id(self) -> int:
        self._last[0] += 1
        return self._last[0]

    @_guarded
    def _save(self, record: DocRecord, buckets: list[bytes]) -> None:
        """Write a new document and file it under ``buckets``: its id is new (ids are never
        reused), so it is in no bucket and has no pending mark yet. With no buckets, a filed
        document written again (committed, or replacing a copy): its SimHash and signature stay."""
        doc = _u64(record.doc_id)
        with self._db.write_batch() as batch:
            batch.put(b"d" + doc, record.to_bytes())
            if record.text is not None:
                batch.put(b"x" + doc, pack_text(record.text))
            if record.state == PENDING:
                batch.put(b"p" + doc, b"")
        if buckets:  # known before the index files it: a lookup reads its signature
            self._simhashes.put(record.doc_id, record.simhash, buckets)
        self._index.add(buckets, record.doc_id)

    def _far_by_simhash(self, doc_ids: set[int], simhash: int) -> set[int]:
        return self._simhashes.far(doc_ids, simhash, self.recipe.simhash_k)

    @_guarded
    def commit(self, doc_id: int) -> None:
        """Only the record and the pending mark change: a new document's write has no delete
        (but one that replaces a copy, which takes that copy out in the same write). A new
        story that replaces no copy (most) has only its state byte changed in its record's
        bytes, as the Redis stores do: nothing else of the record changes, so nothing else of
        it need be read or encoded again."""
        doc = _u64(doc_id)
        data = self._get(self._doc_prefix + doc, verify_checksums=_VERIFY)
        if data is None or data[_STATE] != PENDING:
            return
        if not DocRecord.replaces_of(data):
            with self._db.write_batch() as batch:
                batch.put(b"d" + doc, b"".join([data[:_STATE], bytes([COMMITTED]), data[_STATE + 1 :]]))
                batch.delete(b"p" + doc)
            return
        record = self.get(doc_id)
        if record is not None and record.state == PENDING:
            record.state = COMMITTED
            old = self._superseded(record)
            if old is not None:
                self._swap(record, old)
                return
            with self._db.write_batch() as batch:
                batch.put(b"d" + doc, record.to_bytes())
                batch.delete(b"p" + doc)

    @_guarded
    def _swap(self, record: DocRecord, old: DocRecord) -> None:
        """One write batch: the replacing record (committed or pending), and the replaced
        copy out. A process killed at any moment leaves one copy of the story or the other."""
        doc, gone = _u64(record.doc_id), _u64(old.doc_id)
        with self._db.write_batch() as batch:
            batch.put(b"d" + doc, record.to_bytes())
            if record.state == COMMITTED:
                batch.delete(b"p" + doc)
            batch.delete(b"d" + gone)
            batch.delete(b"x" + gone)
            batch.delete(b"p" + gone)
            batch.put(b"n", _u64(self._last[0]))
        self._index.remove(self.buckets_of(old), old.doc_id)

    @_guarded
    def _delete(self, record: DocRecord, buckets: list[bytes]) -> None:
        doc = _u64(record.doc_id)
        with self._db.write_batch() as batch:
            batch.delete(b"d" + doc)
            batch.delete(b"x" + doc)
            batch.delete(b"p" + doc)
            batch.put(b"n", _u64(self._last[0]))  # the removed id may have been the highest
        self._index.remove(buckets, record.doc_id)

    # Purging may run in a thread of its own while the store checks documents (see purge).
    purges_in_background = True
    paces_purges = True

    @_guarded
    def purge(self, older_than: float, background: bool = False) -> int:
        """Remove the documents stored before ``older_than``: from the oldest id on, up to the
        first one stored at or after it (ids follow arrival order).

        They go in write batches of :data:`PURGE_BATCH`; after each, the bucket index skips
        every id below the first one left (its floor) and drops the runs that hold no other,
        so nothing is read to take a document out of its buckets. Only records are deleted
        and only the floor moves, so a purge in another thread leaves the checks of this one
        alone (their candidates are at or above the floor already: the detector matches no
        document older than its window). LevelDB then compacts the range they held, so the
        store is smaller on disk when purge returns: records come in id order, so LevelDB's own
        compaction seldom goes back to the oldest tables, and deletions alone would leave them
        (and the deletions) on disk. A ``background`` purge, beside checks, rests after each
        batch (:class:`~scrapy_neardup.stores.pacing.Pace`: Python runs one thread at a time, so
        its busy time is the checks' lost time), and compacts the range a slice of
        :data:`COMPACT_SLICE` ids at a time, resting after each as well: compacting it at once
        took the CPU the checks needed.
        """
        with self._shared.purging:
            return self._purge(older_than, background)

    def _purge(self, older_than: float, background: bool) -> int:
        removed, after, first = 0, 0, 0
        pace = Pace(self._shared.closing) if background else None
        while not self._shared.closing.is_set():
            gone, left = [], None
            for key, data in self._db.iterator(start=b"d" + _u64(after + 1), stop=b"e", verify_checksums=_VERIFY):
                if DocRecord.time_of(data) >= older_than:
                    left = int.from_bytes(key[1:], "big")
                    break
                gone.append(key)
                if len(gone) == PURGE_BATCH:
                    break
            if not gone:
                break
            first = first or int.from_bytes(gone[0][1:], "big")  # the lowest id purged
            stop = _u64(int.from_bytes(gone[-1][1:], "big") + 1)
            with self._db.write_batch() as batch:
                for family in (b"x", b"p"):  # kept texts and pending marks: only those there are
                    for key in self._db.iterator(
                        start=family + _u64(after + 1),
                        stop=family + stop,
                        include_value=False,
                        verify_checksums=_VERIFY,
                    ):
                        batch.delete(key)
                for key in gone:
                    batch.delete(key)
                batch.put(b"n", _u64(self._last[0]))
            after = int.from_bytes(gone[-1][1:], "big")
            self._index.set_floor(after + 1)
            self._simhashes.forget_below(after + 1)
            removed += len(gone)
            if left is not None:
                break
            if pace is not None:
                pace.rest()
        if removed and not self._shared.closing.is_set():
            self._compact_purged(first, after, pace)
        return removed

    def _compact_purged(self, first: int, last: int, pace: Pace | None) -> None:
        """Compact the records (and kept texts, pending marks) up to id ``last``, from the start
        (what an earlier purge left is taken too): at once, or a slice at a time from ``first``
        with ``pace``'s rests between (ended when the store closes)."""
        step = last - first + 1 if pace is None else COMPACT_SLICE
        for low in range(first, last + 1, step):
            start = _u64(low) if low > first else b""
            stop = _u64(min(last, low + step - 1) + 1)
            for family in (b"d", b"x", b"p"):
                self._shared.db.compact_range(start=self._prefix + family + start, stop=self._prefix + family + stop)
            if pace is not None and not pace.rest():
                return

    @_guarded
    def texts(self, doc_ids: list[int]) -> dict[int, str]:
        found = {doc_id: self._db.get(b"x" + _u64(doc_id), verify_checksums=_VERIFY) for doc_id in doc_ids}
        return {doc_id: unpack_text(data) for doc_id, data in found.items() if data is not None}

    def records(self) -> Iterator[DocRecord]:
        """Ids follow arrival order, so the key order is the oldest first. A damaged file met
        on the way is the store's own error, as for every other read."""
        try:
            for _, data in self._db.iterator(prefix=b"d", verify_checksums=_VERIFY):
                yield DocRecord.from_bytes(data)
        except _FAILURES as exc:
            raise _failure(self.path, exc) from exc

    @_guarded
    def count(self) -> int:
        keys = self._db.iterator(prefix=b"d", include_value=False, verify_checksums=_VERIFY)
        return sum(1 for _ in keys)

    @_guarded
    def compact(self) -> None:
        """Compact the DB and merge each bucket index into one run: for backups and for
        measuring the size on disk."""
        self._shared.db.compact_range()
        for index in self._shared.indexes.values():
            index.merge_all()

    def location(self) -> str:
        return f"leveldb://{os.path.abspath(self.path)}"

    def last_id(self) -> int:
        return self._last[0]

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if hasattr(self, "_index"):  # opened: what it held now is this machine's receipt
                receipts.record(self)
            _close_db(self.path)
