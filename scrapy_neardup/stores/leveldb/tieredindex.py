"""The buckets of a LevelDB namespace: the newest documents in memory, the others on disk.

Held whole in memory, the buckets cost 200-400 bytes a document (bucketindex.py), more than a
machine has at tens of millions of documents. Here the newest documents are in a table in
memory (:class:`BucketIndex`), and when it holds :data:`FLUSH_ENTRIES` entries it is
written, sorted, as a run file (bucketruns.py) by a thread of the index's own, while a new
table takes the documents that follow. Runs are merged in the background too, the newest
ones together and into an older one once they hold a quarter of it, so that a lookup reads
a few runs, each through its filter first. What stays in memory is the tables, a fixed
size, and about 26 bytes a document of run filters and page fences.

Documents leave the index in two ways. Ids below the *floor* (the lowest id the store still
holds: purging removes the oldest documents first) are skipped wherever they are, and a run
whose ids are all below it is deleted. Other ids removed once their entries are on disk (a
replaced copy, a reservation released late) are *dead*: skipped by lookups, dropped by the
next merge of their run. A removed document of the newest table is taken out of it at once.

The manifest (JSON) names the live runs, the last id they cover, and the dead ids; it is
replaced, through a new file renamed over it, after each flush and merge and at close. What
is not in a run at a crash (at most two tables' worth) is filed again from the records at
open (store.py), so a killed run loses no document and reopens in about a second.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import threading
from collections.abc import Callable

import numpy as np

from ...fingerprints.kernel import kernel
from .bucketindex import BUCKET_CAP, BucketIndex
from .bucketruns import Run, RunDamaged, bucket_keys
from .indexfiles import replace_whole
from .simhashes import SIGNATURE_BITS, UNSIGNED, SimHashes, signature_bit

logger = logging.getLogger(__name__)

FLUSH_ENTRIES = 1 << 18  # entries of the newest table written as a run: about 13,000 documents
MERGE_RATIO = 4  # newer runs are merged into an older one once they hold 1/MERGE_RATIO of it
_VERSION = 1
_MANIFEST = "MANIFEST.json"


class IndexDamaged(OSError):
    """The saved index cannot be used: the documents are filed again from their records."""


class TieredIndex:
    def __init__(self, folder: str, flush_entries: int | None = None, compiled: bool = True):
        """``compiled=False`` skips the C kernel (tests compare the two)."""
        self.folder = folder
        self.flush_entries = flush_entries or FLUSH_ENTRIES
        self.compiled = compiled and kernel is not None
        self.table = BucketIndex(compiled=self.compiled)  # documents after frozen_upto
        self.frozen: BucketIndex | None = None  # being written as a run
        self.runs: list[Run] = []  # oldest first; id ranges in that order, apart
        self.flushed_upto = 0  # every document up to this id is in a run
        self.frozen_upto = 0  # ... or in the frozen table
        self.highest = 0  # the highest id filed
        self.floor = 0  # ids below it are gone
        self.dead: set[int] = set()
        self._dead_array = np.empty(0, dtype=np.uint32)
        self._next_run = 1
        self._lock = threading.Lock()  # lookups against a swap of runs
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._stop_flag = bytearray(1)  # the same, for the kernel writing a run without the GIL
        self._failure: BaseException | None = None
        self._busy = False
        self._merge_everything = False
        self._worker: threading.Thread | None = None
        self._closed = False
        # told the last id in a run after each flush, in the index's thread (the store saves
        # what it keeps beside the index up to there)
        self.on_flush: Callable[[int], None] | None = None

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, folder: str, **options) -> TieredIndex:
        """The index saved in ``folder``, or :class:`IndexDamaged` (nothing is changed then).
        The caller files the documents after :attr:`flushed_upto` from their records."""
        index = cls(folder, **options)
        try:
            with open(os.path.join(folder, _MANIFEST), "rb") as handle:
                manifest = json.loads(handle.read().decode("utf-8"))
            if manifest.get("version") != _VERSION:
                raise IndexDamaged(f"bucket index {folder} is of another version ({manifest.get('version')})")
            for name in manifest["runs"]:
                index.runs.append(Run.open(os.path.join(folder, name)))
            index.flushed_upto = index.frozen_upto = index.highest = int(manifest["flushed_upto"])
            index.dead = {int(doc_id) for doc_id in manifest["dead"]}
            index._next_run = int(manifest["next_run"])
        except FileNotFoundError as exc:
            index._close_runs()
            raise IndexDamaged(f"bucket index {folder} has no manifest") from exc
        except (OSError, ValueError, KeyError, TypeError) as exc:
            index._close_runs()
            raise IndexDamaged(f"bucket index {folder} cannot be read ({exc})") from exc
        index._dead_changed()
        return index

    @classmethod
    def create(cls, folder: str, **options) -> TieredIndex:
        """A new, empty index in ``folder`` (made, or emptied of an older index's files)."""
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if name == _MANIFEST or name.startswith("run-"):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))
        index = cls(folder, **options)
        index.save()
        return index

    def start(self, floor: int) -> None:
        """Begin serving: the store's lowest id, and the thread that writes and merges runs."""
        self.set_floor(floor)
        self._remove_strays()
        self._worker = threading.Thread(target=self._work, name=f"neardup-index {self.folder}", daemon=True)
        self._worker.start()
        self._wake_worker()

    def _remove_strays(self) -> None:
        """Run files no manifest names: a merge or flush cut short by a crash."""
        live = {run.name for run in self.runs}
        for name in os.listdir(self.folder):
            if name.startswith("run-") and name not in live:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.folder, name))

    # ------------------------------------------------------------------ lookups

    def members_each(self, buckets: list[bytes], limit: int, signed: SimHashes | None = None) -> list[list[int]]:
        """For each bucket, its oldest (lowest) ``limit`` live document ids; never more than
        :data:`BUCKET_CAP`, as one table holds (runs not merged yet may hold more together).
        With ``signed``, the documents' signatures (simhashes.py): a member whose signature
        lacks the bucket's bit is of another bucket with the same key, and is left out."""
        self._raise_failure()
        limit = min(limit, BUCKET_CAP)
        with self._lock:
            tables = [self.frozen.table, self.table.table] if self.frozen is not None else [self.table.table]
            if not self.compiled:
                return self._members_python(buckets, limit, signed)
            specs = [run.spec() for run in self.runs]
            signatures = (*signed.signed(), SIGNATURE_BITS, UNSIGNED[0]) if signed is not None else ()
            try:
                return kernel.runs_find(specs, tables, buckets, limit, self._dead_array, self.floor, *signatures)
            except OSError as exc:
                if exc.errno is None:  # a page that does not match its checksum, a file cut short
                    raise RunDamaged(f"bucket index {self.folder}: {exc}") from exc
                raise

    def _members_python(self, buckets: list[bytes], limit: int, signed: SimHashes | None) -> list[list[int]]:
        keys = bucket_keys(buckets)
        tables = [self.frozen, self.table] if self.frozen is not None else [self.table]
        held = [run.may_hold(keys) for run in self.runs]
        out = []
        for number, bucket in enumerate(buckets):
            filed = functools.partial(signed.may_be_filed, bit=signature_bit(bucket)) if signed is not None else None
            found: list[int] = []
            for run, may_hold in zip(self.runs, held):
                if len(found) >= limit:
                    break
                if may_hold[number]:
                    found += run.members(int(keys[number]), limit - len(found), self._dead_array, self.floor, filed)
            for table in tables:
                if len(found) >= limit:
                    break
                ids = table.members_each([bucket], 1 << 62)[0]
                ids = [i for i in ids if i >= self.floor and i not in self.dead and (filed is None or filed(i))]
                found += ids[: limit - len(found)]
            out.append(found)
        return out

    # ------------------------------------------------------------------ changes

    def add(self, buckets: list[bytes], doc_id: int) -> None:
        self._raise_failure()
        self.table.add(buckets, doc_id)
        self.highest = max(self.highest, doc_id)
        if self.table.entries >= self.flush_entries and self.frozen is None:
            with self._lock:
                self.frozen, self.frozen_upto = self.table, self.highest
                self.table = BucketIndex(compiled=self.compiled)
            self._wake_worker()

    def remove(self, buckets: list[bytes], doc_id: int) -> None:
        """Take a document out: from the newest table at once, otherwise as a dead id."""
        with self._lock:
            if doc_id > self.frozen_upto:
                self.table.remove(buckets, doc_id)
            elif doc_id >= self.floor and doc_id not in self.dead:
                self.dead.add(doc_id)
                at = int(np.searchsorted(self._dead_array, doc_id))
                self._dead_array = np.insert(self._dead_array, at, np.uint32(doc_id))

    def set_floor(self, floor: int) -> None:
        """Ids below ``floor`` are gone (purged): skipped now, their runs deleted when whole."""
        with self._lock:
            if floor <= self.floor:
                return
            self.floor = floor
            if any(doc_id < floor for doc_id in self.dead):
                self.dead = {doc_id for doc_id in self.dead if doc_id >= floor}
                self._dead_changed()
        self._wake_worker()

    def _dead_changed(self) -> None:
        self._dead_array = np.array(sorted(self.dead), dtype=np.uint32)

    # ------------------------------------------------------------------ background work

    def _wake_worker(self) -> None:
        with self._wake:
            self._wake.notify()

    def _work(self) -> None:
        try:
            while True:
                with self._wake:
                    job = self._next_job()
                    while job is None and not self._stop.is_set():
                        self._busy = False
                        self._wake.notify_all()
                        self._wake.wait()
                        job = self._next_job()
                    if job is None or self._stop.is_set():
                        return
                    self._busy = True
                job()
        except BaseException as exc:  # reported to the next caller: a disk that filled up...
            self._failure = exc
        finally:
            with self._wake:
                self._busy = False
                self._wake.notify_all()

    def _next_job(self) -> Callable[[], None] | None:
        if self.frozen is not None:
            return self._flush_frozen
        if any(run.max_id < self.floor for run in self.runs):
            return self._drop_purged
        if self._merge_everything:
            return self._merge_runs_into_one
        plan = self._merge_plan()
        if plan:
            return lambda: self._merge(plan)
        return None

    def _merge_plan(self) -> list[Run]:
        """The newest runs to merge: those that together hold 1/MERGE_RATIO of the run
        before them (or more), that run with them; or the oldest run alone once half of
        its entries are below the floor."""
        runs = self.runs
        first, newer = len(runs) - 1, 0
        while first > 0:
            newer += runs[first].count
            if runs[first - 1].count > MERGE_RATIO * newer:
                break
            first -= 1
        if len(runs) - first >= 2:
            return runs[first:]
        oldest = runs[0] if runs else None
        if oldest is not None and oldest.min_id < self.floor and self._below_floor(oldest) > oldest.count // 2:
            return [oldest]
        return []

    def _below_floor(self, run: Run) -> float:
        """About how many of ``run``'s entries are below the floor (ids are spread evenly)."""
        span = max(1, run.max_id - run.min_id + 1)
        return run.count * min(1.0, max(0, self.floor - run.min_id) / span)

    def _flush_frozen(self) -> None:
        frozen, upto, after = self.frozen, self.frozen_upto, self.flushed_upto
        assert frozen is not None
        dead, floor = self._dead_array, self.floor
        words = np.frombuffer(frozen.table, dtype=np.uint32).reshape(-1, 2).astype(np.uint64)
        words = words[words[:, 1] != 0]
        entries = np.sort((words[:, 0] << np.uint64(32)) | words[:, 1])
        run = Run.write(self._new_run_path(), [entries], dead, floor, BUCKET_CAP, compiled=self.compiled)
        with self._lock:
            if run is not None:
                self.runs.append(run)
            self.frozen, self.flushed_upto = None, upto
            self.dead -= {doc_id for doc_id in dead.tolist() if after < doc_id <= upto}  # left out of the run
            self._dead_changed()
        self.save()
        if self.on_flush is not None:
            self.on_flush(upto)

    def _merge(self, plan: list[Run]) -> None:
        dead, floor = self._dead_array, self.floor
        low, high = plan[0].min_id, plan[-1].max_id
        run = Run.write(self._new_run_path(), plan, dead, floor, BUCKET_CAP, self._stop_flag, self.compiled)
        if self._stop.is_set():
            if run is not None:
                self._delete_runs([run])
            return
        with self._lock:
            at = self.runs.index(plan[0])
            self.runs[at : at + len(plan)] = [run] if run is not None else []
            self.dead -= {doc_id for doc_id in dead.tolist() if low <= doc_id <= high}
            self._dead_changed()
        self.save()
        self._delete_runs(plan)

    def _merge_runs_into_one(self) -> None:
        self._merge_everything = False
        if len(self.runs) > 1 or (self.runs and self.runs[0].min_id < self.floor):
            self._merge(list(self.runs))

    def _drop_purged(self) -> None:
        with self._lock:
            gone = [run for run in self.runs if run.max_id < self.floor]
            self.runs = [run for run in self.runs if run.max_id >= self.floor]
        self.save()
        self._delete_runs(gone)

    def _delete_runs(self, runs: list[Run]) -> None:
        with self._lock:
            for run in runs:
                run.close()
                with contextlib.suppress(OSError):
                    os.unlink(run.path)

    def _new_run_path(self) -> str:
        number, self._next_run = self._next_run, self._next_run + 1
        return os.path.join(self.folder, f"run-{number:08d}.bin")

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    def wait(self) -> None:
        """Until the background work in hand is done (tests, benchmarks, compaction)."""
        with self._wake:
            while self._worker is not None and self._worker.is_alive() and (self._busy or self._next_job()):
                self._wake.notify()
                self._wake.wait(0.1)
        self._raise_failure()

    # ------------------------------------------------------------------ saving

    def save(self) -> None:
        """Replace the manifest, through a new file renamed over it once on disk."""
        with self._lock:
            manifest = {
                "version": _VERSION,
                "runs": [run.name for run in self.runs],
                "flushed_upto": self.flushed_upto,
                "dead": sorted(self.dead),
                "next_run": self._next_run,
            }
        replace_whole(os.path.join(self.folder, _MANIFEST), [json.dumps(manifest).encode("utf-8")], sync=True)

    def flush(self) -> None:
        """Write the newest table as a run now, and wait for the work in hand."""
        self.wait()
        self._freeze()
        if self._worker is not None and self._worker.is_alive():
            self.wait()
        elif self.frozen is not None:
            self._flush_frozen()

    def _freeze(self) -> None:
        with self._lock:
            if self.frozen is None and self.table.entries:
                self.frozen, self.frozen_upto = self.table, self.highest
                self.table = BucketIndex(compiled=self.compiled)
            elif self.frozen is None:
                self.frozen_upto = self.flushed_upto = max(self.flushed_upto, self.highest)

    def merge_all(self) -> None:
        """Merge every run into one (compaction: the smallest index on disk)."""
        self.flush()
        self._merge_everything = True
        if self._worker is not None and self._worker.is_alive():
            self._wake_worker()
            self.wait()
        else:
            self._merge_runs_into_one()

    def close(self) -> None:
        """Stop the background work (a merge in hand is given up, its partial file removed)
        and write what is in memory as a run, so that the next open reads no record."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._stop_flag[0] = 1
        self._wake_worker()
        if self._worker is not None:
            self._worker.join()
        try:
            if self._failure is None:
                if self.frozen is not None:
                    self._flush_frozen()
                self._freeze()
                if self.frozen is not None:
                    self._flush_frozen()
                self.save()
        finally:
            self._close_runs()

    def _close_runs(self) -> None:
        for run in self.runs:
            run.close()

    # ------------------------------------------------------------------ figures

    @property
    def entries(self) -> int:
        return self.table.entries + (self.frozen.entries if self.frozen else 0) + sum(r.count for r in self.runs)

    def memory_bytes(self) -> int:
        """Bytes held in memory: the tables, and each run's filter, fences and checksums."""
        tables = len(self.table.table) + (len(self.frozen.table) if self.frozen else 0)
        return tables + sum(run.memory_bytes() for run in self.runs) + self._dead_array.nbytes

    def disk_bytes(self) -> int:
        return sum(run.disk_bytes() for run in self.runs)
