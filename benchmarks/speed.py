"""Speed of the detector on news-length Chinese text, into LevelDB holding 10k, 100k, 1M documents.

What is timed is ``Detector.check(key, text)``: fingerprint + lookup + verify + insert, text
input (no HTML), one process. A store is filled to each size through ``Detector.check`` with
distinct synthetic news-length texts (``corpus.FillerTexts``, made from the sentences of the
second half of the People's Daily corpus; generated in blocks, untimed), and at each size a
batch of real news-length articles (consecutive articles of the first half joined to
1,000-2,000 characters, each followed 1 to 20 articles later by a site's reprint of it) is
measured, then taken out again so that every size sees the same batch. The same batch is
then split into ``Detector.fingerprint`` and ``Detector.check_fingerprint`` to show where the
time goes, and run through ``batching.check_texts`` (what ``neardup dedup`` does: batches of
64; on LevelDB fingerprinted in line, on Redis the next batch while the server works). Bytes on
disk per document are measured after ``compact_range`` (with the saved bucket index), and the
store is then closed and opened again, timed: once reading the saved index, once with its file
deleted (every record filed again, as after a run killed before it ever closed).

In the same run, on the same documents, the published nshash method and datasketch's
MinHashLSH (``baselines.py``, shared with the accuracy benchmark) are filled and measured
the same way, with their memory per document (RSS growth of a fresh process).

Each method runs in its own child process, one after the other, so memory figures start
clean; the machine's load average is printed with every figure, since other jobs may share
the two cores: compare ratios measured in one run.

    python benchmarks/speed.py                              # 10k, 100k, 1M; rjieba and jieba
    python benchmarks/speed.py --quick                      # small sizes, a smoke run
    python benchmarks/speed.py --sizes 10000,100000 --tokenizer rjieba --compare none
    python benchmarks/speed.py --profile 3000               # cProfile of Detector.check only
    python benchmarks/speed.py --sizes 100000 --tokenizer rjieba --compare none --base /tmp/before

``--base DIR`` measures, in the same run, the engine of another commit's source tree (``git
archive COMMIT | tar -x -C DIR``, its C kernel built in place): after each engine job, the
same job in a fresh interpreter that imports ``scrapy_neardup`` from DIR. Its rows are
marked "at base".
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

import corpus
from trees import check_base

STEP = 100_000  # fill throughput is reported per step of this many documents
PASSES = 5  # passes over the measured batch at each size; the best counts
BLOCK = 10_000  # fillers generated (untimed) per block


# ---------------------------------------------------------------------------- measurements


def load() -> str:
    return "{:.1f}/{:.1f}".format(*os.getloadavg()[:2])


def rss_bytes() -> int:
    """Resident memory of this process, after giving freed heap back to the system."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: peak RSS is the best we have
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def rss_parts() -> dict[str, int]:
    """The resident memory split as Linux counts it (after :func:`rss_bytes` has trimmed the
    heap): ``anon`` (the heap: Python objects, the bucket index, LevelDB's cache and write
    buffer) and ``file`` (pages of mapped files: libraries, and the LevelDB table files that
    LevelDB maps to read them). Empty where /proc/self/status is not there."""
    parts = {}
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name in ("RssAnon", "RssFile", "RssShmem"):
                    parts[name[3:].lower()] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return parts


def disk_bytes(path: str) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, name))
    return total


class Clock:
    """Wall and CPU seconds of a ``with`` block.

    CPU time is the calling thread's (``time.thread_time``): the work the measured calls do,
    little disturbed by other jobs on a shared machine. LevelDB's background compaction
    thread is not in it (on an idle second core it costs no wall time either); ``process_cpu``
    is the whole process's, that thread's included.
    """

    wall = cpu = process_cpu = 0.0

    def __enter__(self) -> Clock:
        self._wall, self._cpu, self._process = time.perf_counter(), time.thread_time(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.thread_time() - self._cpu
        self.process_cpu = time.process_time() - self._process


@dataclass
class Batch:
    """The measured documents: real articles, some followed by a reprint."""

    keys: list[str]
    texts: list[str]
    original: list[str | None]  # for a reprint, the key of its original

    @property
    def reprints(self) -> int:
        return sum(1 for o in self.original if o is not None)


def make_batch(docs: list[str], seed: int = 7, every: int = 1) -> Batch:
    """Each article in order; every ``every``-th reprinted 1 to 20 articles later."""
    rng = random.Random(seed)
    events: list[tuple[float, str, str, str | None]] = []
    for i, text in enumerate(docs):
        events.append((float(i), f"news-{i}", text, None))
        if i % every == 0:
            events.append((i + rng.uniform(1.0, 20.0), f"reprint-{i}", corpus.reprint(text, rng), f"news-{i}"))
    events.sort(key=lambda e: e[0])
    return Batch([e[1] for e in events], [e[2] for e in events], [e[3] for e in events])


@dataclass
class Result:
    """What one method measured, sent back from its child process as a dict."""

    method: str
    fill: list[dict] = field(default_factory=list)  # one entry per fill step
    sizes: list[dict] = field(default_factory=list)  # one entry per measured store size
    error: str | None = None


def score(batch: Batch, duplicate_of: list[str | None]) -> dict:
    """Reprints caught and new stories wrongly called duplicates, in the measured batch."""
    caught = sum(1 for o, d in zip(batch.original, duplicate_of) if o is not None and d is not None)
    exact = sum(1 for o, d in zip(batch.original, duplicate_of) if o is not None and d == o)
    false = sum(1 for o, d in zip(batch.original, duplicate_of) if o is None and d is not None)
    return {
        "reprints": batch.reprints,
        "caught": caught,
        "caught_right_original": exact,
        "new": len(batch.keys) - batch.reprints,
        "false_duplicates": false,
    }


# ---------------------------------------------------------------------------- methods


class Subject:
    """One method under test, with the means to fill it and to undo the measured batch."""

    name = "subject"

    def fill(self, keys: list[str], texts: list[str]) -> tuple[Clock, int]:
        """Check fillers; the time taken and how many were judged duplicates."""
        raise NotImplementedError

    def run_batch(self, batch: Batch, tag: str = "a") -> tuple[Clock, list[str | None]]:
        """Time to check the whole batch, and what each document was judged a copy of."""
        raise NotImplementedError

    def warm_up(self, texts: list[str]) -> None:
        """Load dictionaries and tables before anything is timed."""

    def undo_batch(self) -> None:
        """Take out what the last batch stored, so the next size sees the same batch."""

    def close(self) -> None:
        pass


class EngineSubject(Subject):
    def __init__(self, tokenizer: str, workdir: str, keep: bool = False, path: str | None = None):
        """A new store in ``workdir`` (deleted at close unless ``keep``), or, with ``path``, the
        store an earlier run kept there (opened as it is, and kept)."""
        from scrapy_neardup import Detector, Recipe, open_store

        self.keep = keep or path is not None
        self.name = f"scrapy_neardup ({tokenizer})"
        self.path = path or os.path.join(workdir, f"neardup-speed-{tokenizer}-{os.getpid()}")
        if path is None:
            shutil.rmtree(self.path, ignore_errors=True)
        self.store = open_store(f"leveldb://{self.path}", recipe=Recipe(tokenizer=tokenizer), create=path is None)
        self.detector = Detector(self.store)
        self.candidates: list[int] = []
        self._count_candidates()
        self._stored_by_batch: list[int] = []

    def _count_candidates(self) -> None:
        """Record how many stored documents each lookup returned (lookup cost vs store size)."""
        inner = self.store.check_and_add

        def counted(probe, record, confirm=None):
            reservation = inner(probe, record, confirm)
            self.candidates.append(len(reservation.candidates))
            return reservation

        self.store.check_and_add = counted  # type: ignore[method-assign]

    def warm_up(self, texts: list[str]) -> None:
        for text in texts:
            self.detector.fingerprint(text)  # loads the tokenizer dictionary and IDF table

    def fill(self, keys: list[str], texts: list[str]) -> tuple[Clock, int]:
        check = self.detector.check
        duplicates = 0
        with Clock() as clock:
            for key, text in zip(keys, texts):
                if check(key, text).status != "unique":
                    duplicates += 1
        return clock, duplicates

    def first_sight(self) -> None:
        """Empty the fingerprinter's cache of cut lines, so that a pass cuts its texts for the
        first time, as a crawl cuts its new stories (a reprint later in the pass finds the
        lines its original shares with it cut). A pass after another would find every line
        cut: the tokenizer, about a fifth of a check, would be left out of the figure."""
        self.detector.fingerprinter._cut_line.cache_clear()

    def run_batch(self, batch: Batch, tag: str = "a") -> tuple[Clock, list[str | None]]:
        check = self.detector.check
        keys = [f"{tag}:{k}" for k in batch.keys]
        self.candidates.clear()
        self.first_sight()
        with Clock() as clock:
            verdicts = [check(key, text) for key, text in zip(keys, batch.texts)]
        self._stored_by_batch = [v.doc_id for v in verdicts if v.status == "unique"]
        return clock, [v.duplicate_of.split(":", 1)[1] if v.duplicate_of else None for v in verdicts]

    def run_streamed(self, batch: Batch) -> dict:
        """The batch through ``batching.check_texts`` (as ``neardup dedup`` runs), in batches
        of 64. CPU time is the whole process's here (LevelDB's compaction thread included)."""
        from scrapy_neardup.engine.batching import check_texts

        documents = [(f"t:{key}", text) for key, text in zip(batch.keys, batch.texts)]
        self.first_sight()
        wall, cpu = time.perf_counter(), time.process_time()
        verdicts = list(check_texts(self.detector, documents, 64))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        self._stored_by_batch = [v.doc_id for v in verdicts if v.status == "unique"]
        return {"streamed_docs_per_s": len(documents) / wall, "streamed_docs_per_cpu_s": len(documents) / cpu}

    def run_split(self, batch: Batch) -> dict:
        """The batch again, as fingerprint then check_fingerprint, each timed (wall and CPU)."""
        fingerprint, check_fp = self.detector.fingerprint, self.detector.check_fingerprint
        fp_wall = store_wall = fp_cpu = store_cpu = 0.0
        stored = []
        self.first_sight()
        wall, cpu = time.perf_counter, time.thread_time
        for key, text in zip(batch.keys, batch.texts):
            w0, c0 = wall(), cpu()
            fp = fingerprint(text)
            w1, c1 = wall(), cpu()
            verdict = check_fp(f"s:{key}", fp)
            store_wall += wall() - w1
            store_cpu += cpu() - c1
            fp_wall += w1 - w0
            fp_cpu += c1 - c0
            if verdict.status == "unique":
                stored.append(verdict.doc_id)
        self._stored_by_batch = stored
        n = len(batch.keys) / 1e6
        return {
            "fingerprint_us": fp_wall / n,
            "store_us": store_wall / n,
            "fingerprint_cpu_us": fp_cpu / n,
            "store_cpu_us": store_cpu / n,
        }

    def undo_batch(self) -> None:
        for doc_id in self._stored_by_batch:
            self.store.remove(doc_id)
        self._stored_by_batch = []

    def index_bytes(self) -> int:
        """Bytes of the store's bucket index held in this process's memory."""
        index = getattr(self.store, "_index", None)
        return index.memory_bytes() if hasattr(index, "memory_bytes") else len(getattr(index, "table", b""))

    def compact(self) -> dict:
        """Compact the LevelDB (so that deleted and overwritten entries do not count) and size it."""
        start = time.perf_counter()
        if hasattr(self.store, "compact"):
            self.store.compact()
        else:  # no public compaction in the store (yet): reach for the plyvel DB
            shared = getattr(self.store, "_shared", None)
            db = getattr(shared, "db", None) or getattr(self.store, "_root", None)
            if db is None:
                return {"disk_bytes": disk_bytes(self.path), "compacted": False}
            db.compact_range()
        import glob

        index = sum(
            disk_bytes(folder) if os.path.isdir(folder) else os.path.getsize(folder)
            for folder in glob.glob(os.path.join(self.path, "neardup-index-*"))
        )
        return {
            "compact_s": time.perf_counter() - start,
            "disk_bytes": disk_bytes(self.path),
            "index_disk_bytes": index,
            "compacted": True,
        }

    def reopen(self) -> dict:
        """Close and open the store again, timed: reading the saved bucket index, then (with
        its file deleted, as after a run killed before any close) filing every record again."""
        import glob

        from scrapy_neardup import Detector, open_store

        times = {}
        for case in ("index_load_s", "index_refile_s"):
            self.store.close()
            if case == "index_refile_s":
                for saved in glob.glob(os.path.join(self.path, "neardup-index-*")):
                    shutil.rmtree(saved) if os.path.isdir(saved) else os.remove(saved)
            start = time.perf_counter()
            self.store = open_store(f"leveldb://{self.path}", recipe=self.detector.recipe)
            times[case] = time.perf_counter() - start
        self.detector = Detector(self.store, fingerprinter=self.detector.fingerprinter)
        self._count_candidates()
        return times

    def close(self) -> None:
        self.store.close()
        if not self.keep:
            shutil.rmtree(self.path, ignore_errors=True)


class BaselineSubject(Subject):
    """A peer from ``baselines.py``; the batch is undone through its (insertion-ordered) dicts."""

    def __init__(self, kind: str):
        import baselines

        if kind == "nshash":
            self.method = baselines.PublishedNshash()
        elif kind == "minhash":
            self.method = baselines.MinHashLSHMethod(threshold=0.5, num_perm=128, width=5)
        else:
            raise ValueError(kind)
        self.kind = kind
        self.name = self.method.name
        self._mark: tuple[int, int] = (0, 0)

    def warm_up(self, texts: list[str]) -> None:
        self.method.warm_up()

    def fill(self, keys: list[str], texts: list[str]) -> tuple[Clock, int]:
        check = self.method.check
        duplicates = 0
        with Clock() as clock:
            for key, text in zip(keys, texts):
                if check(key, text).duplicate:
                    duplicates += 1
        return clock, duplicates

    def _sizes(self) -> tuple[int, int]:
        m = self.method
        if self.kind == "nshash":
            return len(m.hashes), len(m.first_key)
        return len(m.order), 0

    def run_batch(self, batch: Batch, tag: str = "a") -> tuple[Clock, list[str | None]]:
        check = self.method.check
        self._mark = self._sizes()
        with Clock() as clock:
            outcomes = [check(key, text) for key, text in zip(batch.keys, batch.texts)]
        return clock, [o.match if o.duplicate else None for o in outcomes]

    def undo_batch(self) -> None:
        m = self.method
        if self.kind == "nshash":
            for name, mark in (("hashes", self._mark[0]), ("first_key", self._mark[1])):
                table = getattr(m, name)
                for key in list(table)[mark:]:
                    del table[key]
        else:
            for key in list(m.order)[self._mark[0] :]:
                m.lsh.remove(key)
                del m.order[key]


# ---------------------------------------------------------------------------- one method's run


def fill_steps(sizes: list[int]) -> list[int]:
    """Where the fill stops to report: every STEP documents (``--step``), and at each measured size."""
    top = max(sizes)
    return sorted(set(sizes) | set(range(STEP, top, STEP)))


def run_subject(
    make: Callable[[], Subject],
    sizes: list[int],
    fillers: corpus.FillerTexts,
    batch: Batch,
    split: bool,
    report: Callable[[str], None],
) -> Result:
    subject = make()
    result = Result(subject.name)
    try:
        subject.warm_up(fillers.chunk(10**9, 10**9 + 200))  # texts never used in a fill
        base_rss = rss_bytes()
        base_parts = rss_parts()
        stored = 0
        next_filler = 0
        step_start_stored, step_wall, step_cpu, step_dups = 0, 0.0, 0.0, 0
        for stop in fill_steps(sizes):
            while stored < stop:
                take = min(BLOCK, stop - stored)
                texts = fillers.chunk(next_filler, next_filler + take)
                keys = [f"filler-{i}" for i in range(next_filler, next_filler + take)]
                next_filler += take
                clock, dups = subject.fill(keys, texts)
                stored += take - dups
                step_wall += clock.wall
                step_cpu += clock.cpu
                step_dups += dups
            checked = stored - step_start_stored + step_dups
            step = {
                "from": step_start_stored,
                "to": stored,
                "docs_per_s": checked / step_wall,
                "docs_per_cpu_s": checked / step_cpu,
                "filler_duplicates": step_dups,
                "load": load(),
            }
            if isinstance(subject, EngineSubject):
                step["candidates_per_lookup"] = sum(subject.candidates) / max(1, len(subject.candidates))
                subject.candidates.clear()
            step["rss_per_doc"] = (rss_bytes() - base_rss) / max(1, stored)
            result.fill.append(step)
            candidates = step.get("candidates_per_lookup")
            report(
                f"  {subject.name}: fill {step['from']:,} -> {stored:,}: {step['docs_per_s']:,.0f} docs/s "
                f"({step['docs_per_cpu_s']:,.0f}/CPU-s), "
                + ("" if candidates is None else f"{candidates:.2f} candidates/lookup, ")
                + f"{step_dups} filler(s) judged duplicate, RSS +{step['rss_per_doc']:,.0f} B/doc, load {step['load']}"
            )
            step_start_stored, step_wall, step_cpu, step_dups = stored, 0.0, 0.0, 0
            if stop not in sizes:
                continue
            entry: dict = {"stored": stored, "load_before": load()}
            # best of PASSES passes (undone in between): this machine's speed drifts by up
            # to 1.5x within seconds, and the best pass is the code's speed, not the drift's
            walls, cpus = [], []
            for tag in "abcde"[:PASSES]:
                clock, matched = subject.run_batch(batch, tag)
                walls.append(clock.wall)
                cpus.append(clock.cpu)
                if isinstance(subject, EngineSubject):
                    entry["candidates_per_lookup"] = sum(subject.candidates) / max(1, len(subject.candidates))
                subject.undo_batch()
            entry["batch_docs"] = len(batch.keys)
            entry["batch_docs_per_s"] = len(batch.keys) / min(walls)
            entry["batch_docs_per_cpu_s"] = len(batch.keys) / min(cpus)
            entry.update(score(batch, matched))
            if isinstance(subject, EngineSubject):
                streamed = [subject.run_streamed(batch)]
                subject.undo_batch()
                streamed.append(subject.run_streamed(batch))
                subject.undo_batch()
                entry.update(max(streamed, key=lambda x: x["streamed_docs_per_s"]))
            if split and isinstance(subject, EngineSubject):
                entry.update(subject.run_split(batch))
                subject.undo_batch()
            entry["rss_growth_bytes"] = rss_bytes() - base_rss
            entry["rss_per_doc"] = entry["rss_growth_bytes"] / stored
            parts = rss_parts()
            entry["rss_parts_per_doc"] = {name: (parts[name] - base_parts.get(name, 0)) / stored for name in parts}
            if isinstance(subject, EngineSubject):
                entry["index_bytes_per_doc"] = subject.index_bytes() / stored
            if isinstance(subject, EngineSubject):
                entry.update(subject.compact())
                entry["disk_per_doc"] = entry["disk_bytes"] / stored
                entry.update(subject.reopen())
            entry["load_after"] = load()
            result.sizes.append(entry)
            report(f"  {subject.name} at {stored:,}: " + describe_size(entry))
    except Exception:
        result.error = traceback.format_exc()
        report(f"  {subject.name}: FAILED\n{result.error}")
    finally:
        subject.close()
    return result


def describe_size(e: dict) -> str:
    parts = [f"batch {e['batch_docs_per_s']:,.0f} docs/s ({e['batch_docs_per_cpu_s']:,.0f}/CPU-s)"]
    if "streamed_docs_per_s" in e:
        parts.append(f"check_texts {e['streamed_docs_per_s']:,.0f} docs/s ({e['streamed_docs_per_cpu_s']:,.0f}/CPU-s)")
    if "fingerprint_us" in e:
        parts.append(
            f"fingerprint {e['fingerprint_us']:,.0f} us + store {e['store_us']:,.0f} us "
            f"(CPU {e['fingerprint_cpu_us']:,.0f} + {e['store_cpu_us']:,.0f})"
        )
    if "disk_per_doc" in e:
        parts.append(
            f"{e['disk_per_doc']:,.0f} B/doc on disk"
            + (
                f" ({e['index_disk_bytes'] / e['stored']:,.0f} of them the bucket index)"
                if "index_disk_bytes" in e
                else ""
            )
        )
    if "index_load_s" in e:
        parts.append(f"reopen {e['index_load_s']:.2f} s (refiling without the index file {e['index_refile_s']:.2f} s)")
    split_rss = ", ".join(f"{name} {value:+,.0f}" for name, value in e.get("rss_parts_per_doc", {}).items())
    parts.append(f"RSS +{e['rss_per_doc']:,.0f} B/doc" + (f" ({split_rss})" if split_rss else ""))
    if "index_bytes_per_doc" in e:
        parts.append(f"bucket index in memory {e['index_bytes_per_doc']:,.0f} B/doc")
    parts.append(f"caught {e['caught']}/{e['reprints']}, false dup {e['false_duplicates']}/{e['new']}")
    parts.append(f"load {e['load_before']}")
    return ", ".join(parts)


def _child(conn, make, sizes, fillers, batch, split) -> None:
    def report(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    result = run_subject(make, sizes, fillers, batch, split, report)
    conn.send(result.__dict__)
    conn.close()


def run_in_child(make, sizes, fillers, batch, split) -> Result:
    """Run one method in a forked process, so its memory figures start from a clean process."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(child, make, sizes, fillers, batch, split))
    process.start()
    child.close()
    try:
        data = parent.recv()
    except EOFError:
        data = {"method": "?", "error": f"child process died (exit code {process.join() or process.exitcode})"}
    process.join()
    return Result(**data)


# ---------------------------------------------------------------------------- output


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


def print_report(results: list[Result], batch: Batch, fillers_mean: float, batch_mean: float) -> None:
    print()
    print(
        f"Documents: fillers of {fillers_mean:,.0f} characters on average (synthetic, distinct); a measured "
        f"batch of {len(batch.keys)} real news-length documents ({batch_mean:,.0f} characters on average: "
        f"{len(batch.keys) - batch.reprints} articles and {batch.reprints} reprints of them), best of {PASSES} "
        f"passes. docs/s is wall-clock; docs/CPU-s and (CPU) count the measuring thread's CPU time "
        f"only (steadier when other jobs share the {os.cpu_count()} cores; LevelDB's background "
        f"compaction thread is not in it). load = 1-/5-minute load average at the time."
    )
    engines = [r for r in results if r.method.startswith("scrapy_neardup")]
    if engines:
        print("\n## Detector.check into LevelDB (fingerprint + lookup + verify + insert), measured batch\n")
        rows = []
        for r in engines:
            for e in r.sizes:
                rows.append(
                    [
                        r.method,
                        f"{e['stored']:,}",
                        f"{e['batch_docs_per_s']:,.0f}",
                        f"{e['batch_docs_per_cpu_s']:,.0f}",
                        f"{e.get('streamed_docs_per_s', 0):,.0f} ({e.get('streamed_docs_per_cpu_s', 0):,.0f})",
                        f"{e.get('fingerprint_us', 0):,.0f} ({e.get('fingerprint_cpu_us', 0):,.0f})",
                        f"{e.get('store_us', 0):,.0f} ({e.get('store_cpu_us', 0):,.0f})",
                        f"{e.get('candidates_per_lookup', 0):.2f}",
                        f"{e.get('disk_per_doc', 0):,.0f}",
                        f"{e['rss_per_doc']:,.0f}",
                        f"{e['caught']}/{e['reprints']}",
                        f"{e['false_duplicates']}/{e['new']}",
                        e["load_before"],
                    ]
                )
        print(
            table(
                rows,
                [
                    "method",
                    "stored",
                    "docs/s",
                    "docs/CPU-s",
                    "check_texts docs/s (/CPU-s)",
                    "fingerprint us/doc (CPU)",
                    "store us/doc (CPU)",
                    "candidates/lookup",
                    "disk B/doc",
                    "RSS B/doc",
                    "reprints caught",
                    "false dups",
                    "load",
                ],
            )
        )
    print("\n## Filling the store through the same call (synthetic fillers), per step\n")
    rows = []
    for r in results:
        for s in r.fill:
            candidates = s.get("candidates_per_lookup")
            rows.append(
                [
                    r.method,
                    f"{s['from']:,} -> {s['to']:,}",
                    f"{s['docs_per_s']:,.0f}",
                    f"{s['docs_per_cpu_s']:,.0f}",
                    "-" if candidates is None else f"{candidates:.2f}",
                    str(s["filler_duplicates"]),
                    f"{s.get('rss_per_doc', 0):,.0f}",
                    s["load"],
                ]
            )
    print(
        table(
            rows,
            [
                "method",
                "stored",
                "docs/s",
                "docs/CPU-s",
                "candidates/lookup",
                "fillers judged dup",
                "RSS B/doc",
                "load",
            ],
        )
    )
    print("\n## Compared on the same documents (measured batch)\n")
    rows = []
    reference = next((r for r in engines if "rjieba" in r.method), engines[0] if engines else None)
    ours = {e["stored"]: e for e in reference.sizes} if reference else {}
    for r in results:
        for e in r.sizes:
            mine = ours.get(e["stored"])
            ratio = f"{mine['batch_docs_per_cpu_s'] / e['batch_docs_per_cpu_s']:.2f}" if mine else "-"
            memory = f"{e['rss_per_doc']:,.0f}"
            if "disk_per_doc" in e:
                memory += f" + {e['disk_per_doc']:,.0f} disk"
            rows.append(
                [
                    r.method,
                    f"{e['stored']:,}",
                    f"{e['batch_docs_per_s']:,.0f}",
                    f"{e['batch_docs_per_cpu_s']:,.0f}",
                    ratio,
                    memory,
                    f"{e['caught']}/{e['reprints']}",
                    f"{e['false_duplicates']}/{e['new']}",
                    e["load_before"],
                ]
            )
    name = reference.method if reference else "engine"
    print(
        table(
            rows,
            [
                "method",
                "stored",
                "docs/s",
                "docs/CPU-s",
                f"{name} speed / this (CPU)",
                "B/doc (RSS growth)",
                "reprints caught",
                "false dups",
                "load",
            ],
        )
    )
    for r in results:
        if r.error:
            print(f"\n{r.method} FAILED:\n{r.error}")


# ---------------------------------------------------------------------------- profile


def profile(docs: list[str], fillers: corpus.FillerTexts, count: int, tokenizer: str, workdir: str) -> None:
    """cProfile of Detector.check on ``count`` news-length documents, printed."""
    import cProfile
    import io
    import pstats

    subject = EngineSubject(tokenizer, workdir)
    try:
        subject.warm_up(fillers.chunk(10**9, 10**9 + 200))
        texts = fillers.chunk(0, max(0, count - len(docs))) + docs
        keys = [f"p{i}" for i in range(len(texts))]
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        subject.fill(keys, texts)
        profiler.disable()
        seconds = time.perf_counter() - start
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        print(
            f"{len(texts)} news-length docs ({len(texts) - len(docs)} fillers, {len(docs)} real), {tokenizer}, "
            f"{len(texts) / seconds:,.0f} docs/s under the profiler, load {load()}"
        )
        print(out.getvalue())
    finally:
        subject.close()


# ---------------------------------------------------------------------------- main


def engine_version() -> str:
    """The commit the engine was loaded from, and whether its files differ from it."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "log", "-1", "--format=%h %cI", "--", "scrapy_neardup"],
            cwd=corpus.REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "scrapy_neardup"],
            cwd=corpus.REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head or 'unknown'}{' + uncommitted changes' if dirty else ''}"


def run_base(base: Path, tokenizer: str, sizes: list[int], args: argparse.Namespace) -> Result:
    """One engine job measured with the engine of the source tree ``base``, in a fresh process."""
    import subprocess

    with tempfile.TemporaryDirectory() as scratch:
        figures = Path(scratch) / "base.json"
        command = [
            sys.executable,
            __file__,
            "--engine-path",
            str(base),
            "--data",
            str(args.data),
            "--sizes",
            ",".join(map(str, sizes)),
            "--tokenizer",
            tokenizer,
            "--compare",
            "none",
            "--workdir",
            args.workdir,
            "--json",
            str(figures),
            "--step",
            str(args.step),
        ] + (["--no-split"] if args.no_split else [])
        done = subprocess.run(command, stdout=subprocess.DEVNULL)
        if done.returncode != 0 or not figures.exists():
            return Result(method=f"scrapy_neardup ({tokenizer}) at base", error=f"exit code {done.returncode}")
        (data,) = json.loads(figures.read_text())
    data["method"] += " at base"
    return Result(**data)


def parse_sizes(value: str) -> list[int]:
    if value.strip().lower() in ("", "none", "0"):
        return []
    return sorted({int(float(v)) for v in value.split(",") if v.strip()})


def main(argv: Iterable[str] | None = None) -> None:
    global STEP
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="store sizes to measure at")
    parser.add_argument("--tokenizer", default="rjieba,jieba", help="tokenizers to run the engine with")
    parser.add_argument(
        "--jieba-max",
        type=int,
        default=100_000,
        help="largest store size for the slow jieba tokenizer (default 100000)",
    )
    parser.add_argument("--compare", default="nshash,minhash", help="baselines to run: nshash, minhash, or none")
    parser.add_argument(
        "--compare-sizes",
        default="10000,100000",
        help="store sizes for the baselines (MinHashLSH at 1M takes ~30 min and GBs)",
    )
    parser.add_argument(
        "--step", type=int, default=STEP, help=f"report the fill every this many documents (default {STEP:,})"
    )
    parser.add_argument("--quick", action="store_true", help="sizes 2000,10000 for everything: a smoke run")
    parser.add_argument("--no-split", action="store_true", help="skip the fingerprint/store split")
    parser.add_argument("--workdir", default=tempfile.gettempdir(), help="where the LevelDB stores go")
    parser.add_argument("--keep", action="store_true", help="keep the LevelDB stores afterwards")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument(
        "--profile", type=int, metavar="N", help="only profile Detector.check on N news-length documents and exit"
    )
    parser.add_argument("--base", type=Path, help="source tree of another commit, measured in the same run")
    parser.add_argument("--engine-path", type=Path, help=argparse.SUPPRESS)  # the --base child
    args = parser.parse_args(argv)
    if problem := check_base(args.base):
        parser.error(problem)
    STEP = args.step
    if args.engine_path:
        sys.path.insert(0, str(args.engine_path.resolve()))

    sizes = parse_sizes(args.sizes)
    compare_sizes = parse_sizes(args.compare_sizes)
    jieba_max = args.jieba_max
    if args.quick:
        sizes, compare_sizes, jieba_max = [2000, 10000], [2000, 10000], 2000
    tokenizers = [t.strip() for t in args.tokenizer.split(",") if t.strip()]
    compare = [] if args.compare.strip().lower() == "none" else [c.strip() for c in args.compare.split(",")]

    # The measured articles come from the first half of the corpus, the fillers' sentences
    # from the second, so that the measured news shares with the fillers only what news shares.
    articles = corpus.load_articles(args.data)
    half = len(articles) // 2
    docs = corpus.news_length_docs(articles[:half])
    fillers = corpus.FillerTexts(corpus.sentence_pool(articles[half:]))
    batch = make_batch(docs)

    if args.profile:
        profile(docs, fillers, args.profile, tokenizers[0], args.workdir)
        return

    # Import the engine and the baselines here, before the children fork, so that every
    # method of the run uses the same code even if the files change during a long run.
    import baselines  # noqa: F401

    import scrapy_neardup.engine.detector
    import scrapy_neardup.stores.leveldb  # noqa: F401

    sample = fillers.chunk(0, 2000)
    fillers_mean = sum(map(len, sample)) / len(sample)
    batch_mean = sum(map(len, batch.texts)) / len(batch.texts)
    start = time.perf_counter()
    sample_gen = fillers.chunk(5_000_000, 5_000_000 + 5000)
    gen_us = (time.perf_counter() - start) / len(sample_gen) * 1e6
    version = engine_version()
    print(
        f"speed.py: engine {version}; sizes {sizes}, tokenizers {tokenizers} (jieba up to {jieba_max:,}), "
        f"baselines {compare} at {compare_sizes}; filler generation {gen_us:.0f} us/doc (untimed); "
        f"load {load()}",
        file=sys.stderr,
        flush=True,
    )

    # (name, factory, sizes, split); the slow jieba run last, so the main figures come first
    jobs: list[tuple[str, Callable[[], Subject], list[int], bool]] = []
    for tokenizer in tokenizers:
        tok_sizes = [s for s in sizes if tokenizer != "jieba" or s <= jieba_max]
        if tok_sizes:
            factory = lambda t=tokenizer: EngineSubject(t, args.workdir, args.keep)  # noqa: E731
            jobs.append((tokenizer, factory, tok_sizes, not args.no_split))
    for kind in compare:
        if compare_sizes:
            jobs.append((kind, lambda k=kind: BaselineSubject(k), compare_sizes, False))
    jobs.sort(key=lambda job: job[0] == "jieba")

    results: list[Result] = []
    for name, make, job_sizes, split in jobs:
        results.append(run_in_child(make, job_sizes, fillers, batch, split))
        if args.base and name in tokenizers:
            results.append(run_base(args.base, name, job_sizes, args))
    print(f"Engine: scrapy_neardup at {version}" + (f"; base: the source tree {args.base}." if args.base else "."))
    print_report(results, batch, fillers_mean, batch_mean)
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=1))


if __name__ == "__main__":
    main()
