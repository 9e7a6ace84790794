"""Check-and-add throughput and memory of the redis:// store, against a local redis-server.

What is measured, in one run, against a redis-server this script starts on a free port:

1. Documents/s of ``Detector.check(key, text)`` (text input, rjieba by default: fingerprint +
   one check-and-add script + client-side verification, and a remove for duplicates) from 1,
   2 and 4 processes sharing one store, with the split of each document's time between
   fingerprinting and the store call (``check_fingerprint``: round trip + verification).
   Then the same documents through ``batching.check_texts``: batches of 64 checked in one
   round trip, the next batch fingerprinted while the server works on the one sent, whose
   duplicates go out with the next (as ``neardup dedup`` does).
2. The store alone: documents/s of ``check_fingerprint`` with fingerprints computed before the
   clock starts, from 1, 2 and 4 processes, and redis-server CPU per check-and-add.
3. Memory per stored document: ``INFO memory`` ``used_memory`` before and after storing
   ``--memory-docs`` (100k) distinct documents, without and with a TTL (expiring keys cost an
   entry in Redis's expiry table). datasketch's figure comes from ``--ds-memory-docs`` (20k)
   documents, since its MinHash costs about 12 ms a document to compute here.
4. datasketch's MinHashLSH on its Redis storage (``storage_config={'type': 'redis', ...}``),
   on the same documents: query + insert documents/s from 1, 2 and 4 processes (MinHash over
   character 5-shingles, 128 permutations, threshold 0.5), and its memory per document.

Documents: consecutive People's Daily articles joined to news length (1,000-2,000 characters),
then distinct synthetic news-length texts (corpus sentences with a few characters replaced,
``corpus.FillerTexts``), with a reprint (banner, edits, cut end, editor line) after every
fifth document, so verification and removal run as in a real crawl.

The machine has two cores and may be shared: the load average is printed with each figure,
and CPU milliseconds per document are given beside wall-clock rates.

    python benchmarks/redis_throughput.py                 # full run (about 10 to 20 minutes)
    python benchmarks/redis_throughput.py --quick         # smoke run: small sizes
    python benchmarks/redis_throughput.py --docs 4000 --memory-docs 100000 --procs 1,2,4
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import corpus  # benchmarks/corpus.py: the shared data, read the same way by every benchmark

from scrapy_neardup import DUPLICATE, Detector, Fingerprinter, Recipe, open_store
from scrapy_neardup.engine.batching import check_texts
from scrapy_neardup.fingerprints.text import content_chars, normalize

NAMESPACE = "bench"


# -- redis-server ---------------------------------------------------------------------------


def start_redis_server() -> tuple[subprocess.Popen, int, str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server not found: apt-get install redis-server")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="neardup-bench-redis-")
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
            "--logfile",
            os.path.join(workdir, "redis.log"),
        ]
    )
    import redis

    client = redis.Redis(port=port)
    for _ in range(200):
        try:
            client.ping()
            return process, port, workdir
        except redis.ConnectionError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit(f"redis-server did not start; see {workdir}/redis.log")


def used_memory(client) -> int:
    return int(client.info("memory")["used_memory"])


def server_cpu(client) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


# -- documents ------------------------------------------------------------------------------


def stream(news: list[str], fillers: corpus.FillerTexts, count: int, seed: int = 4) -> list[tuple[str, str]]:
    """``count`` (key, text): real news-length texts first, then fillers; a reprint after every fifth."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    originals: list[str] = []
    i = 0
    while len(out) < count:
        text = news[i] if i < len(news) else fillers.text(i - len(news))
        out.append((f"https://site{i % 7}.example/{i}", text))
        originals.append(text)
        i += 1
        if i % 5 == 0 and len(out) < count:
            source = rng.randrange(max(0, len(originals) - 50), len(originals))
            out.append((f"https://reprint.example/{i}", corpus.reprint(originals[source], rng)))
    return out


def shingles(text: str, width: int = 5) -> list[bytes]:
    chars = content_chars(normalize(text))
    return list({chars[i : i + width].encode("utf-8") for i in range(max(1, len(chars) - width + 1))})


# -- workers (forked: they inherit the loaded tokenizer and IDF table) ----------------------


@dataclass
class Result:
    docs: int
    start: float
    end: float
    cpu: float
    fingerprint: float = 0.0  # seconds spent fingerprinting (or computing MinHashes)
    store: float = 0.0  # seconds spent in the store call
    duplicates: int = 0


def _neardup_worker(uri, recipe, docs, prints, mode, batch_size, barrier, queue) -> None:
    store = open_store(uri, NAMESPACE, recipe, redis_allow_no_persistence=True)  # the run's own server
    count = len(docs)
    detector = Detector(store)
    detector.fingerprint(docs[0][1])  # loads what is loaded lazily, before the clock starts
    barrier.wait()
    cpu0, start = time.process_time(), time.time()
    fp_time = store_time = 0.0
    duplicates = 0
    if mode == "batch":  # a batch in one round trip while the next one is fingerprinted
        duplicates = sum(v.status == DUPLICATE for v in check_texts(detector, docs, batch_size))
        docs = []
    for index, (key, text) in enumerate(docs):
        t0 = time.perf_counter()
        fingerprint = prints[index] if prints is not None else detector.fingerprint(text)
        t1 = time.perf_counter()
        verdict = detector.check_fingerprint(key, fingerprint)
        store_time += time.perf_counter() - t1
        fp_time += t1 - t0
        duplicates += verdict.status == DUPLICATE
    end, cpu = time.time(), time.process_time() - cpu0
    store.close()
    queue.put(Result(count, start, end, cpu, fp_time, store_time, duplicates))


def _minhash(text: str, num_perm: int):
    from datasketch import MinHash

    m = MinHash(num_perm=num_perm, seed=1)
    m.update_batch(shingles(text))
    return m


def _datasketch_lsh(port: int, basename: bytes, num_perm: int, threshold: float):
    from datasketch import MinHashLSH

    config = {"type": "redis", "basename": basename, "redis": {"host": "127.0.0.1", "port": port}}
    return MinHashLSH(threshold=threshold, num_perm=num_perm, storage_config=config)


def _datasketch_worker(port, basename, num_perm, threshold, docs, barrier, queue) -> None:
    lsh = _datasketch_lsh(port, basename, num_perm, threshold)
    _minhash(docs[0][1], num_perm)
    barrier.wait()
    cpu0, start = time.process_time(), time.time()
    mh_time = store_time = 0.0
    duplicates = 0
    for key, text in docs:
        t0 = time.perf_counter()
        m = _minhash(text, num_perm)
        t1 = time.perf_counter()
        if lsh.query(m):
            duplicates += 1
        else:
            lsh.insert(key, m, check_duplication=False)
        store_time += time.perf_counter() - t1
        mh_time += t1 - t0
    end, cpu = time.time(), time.process_time() - cpu0
    queue.put(Result(len(docs), start, end, cpu, mh_time, store_time, duplicates))


def run_parallel(target, procs: int, make_args) -> list[Result]:
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(procs)
    queue = context.Queue()
    workers = [context.Process(target=target, args=(*make_args(p), barrier, queue)) for p in range(procs)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=3600) for _ in workers]
    for worker in workers:
        worker.join()
        if worker.exitcode:
            raise SystemExit(f"a worker failed with exit code {worker.exitcode}")
    return results


def summarise(results: list[Result]) -> dict:
    docs = sum(r.docs for r in results)
    wall = max(r.end for r in results) - min(r.start for r in results)
    return {
        "docs": docs,
        "rate": docs / wall,
        "cpu_ms": 1000 * sum(r.cpu for r in results) / docs,
        "fp_ms": 1000 * sum(r.fingerprint for r in results) / docs,
        "store_ms": 1000 * sum(r.store for r in results) / docs,
        "duplicates": sum(r.duplicates for r in results),
    }


# -- fingerprints for the memory fill, in a pool ----------------------------------------------

_POOL_FP: Fingerprinter | None = None


def _fingerprint_chunk(args) -> list:
    texts, with_minhash, num_perm = args
    global _POOL_FP
    if _POOL_FP is None:
        _POOL_FP = Fingerprinter(_POOL_RECIPE)
    return [(_POOL_FP.fingerprint(t), _minhash(t, num_perm) if with_minhash else None) for t in texts]


_POOL_RECIPE: Recipe | None = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--docs", type=int, default=4000, help="documents per throughput run (default 4000)")
    parser.add_argument(
        "--memory-docs", type=int, default=100_000, help="documents stored for the memory figure (0: skip)"
    )
    parser.add_argument(
        "--ds-memory-docs",
        type=int,
        default=20_000,
        help="documents stored in datasketch for its memory figure (MinHash costs ~12 ms a document)",
    )
    parser.add_argument("--memory-ttl", type=float, default=7 * 86400, help="TTL of the second memory fill (0: skip)")
    parser.add_argument("--procs", default="1,2,4", help="process counts (default 1,2,4)")
    parser.add_argument("--tokenizer", default="rjieba", choices=["rjieba", "jieba"])
    parser.add_argument("--compare", default="datasketch", choices=["datasketch", "none"])
    parser.add_argument("--num-perm", type=int, default=128)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument(
        "--batch-size", type=int, default=64, help="documents per batch in the batched rows (default 64)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 600 docs, 5k stored")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the redis-server is stopped
    if args.quick:
        args.docs, args.memory_docs, args.ds_memory_docs = 600, 5000, 2000
    procs = [int(p) for p in args.procs.split(",")]

    import redis

    global _POOL_RECIPE
    recipe = _POOL_RECIPE = Recipe(tokenizer=args.tokenizer).resolved()
    articles = corpus.load_articles(args.data)
    news = corpus.news_length_docs(articles)
    fillers = corpus.FillerTexts(corpus.sentence_pool(articles))
    docs = stream(news, fillers, args.docs)
    chars = sum(len(t) for _, t in docs) / len(docs)
    print(
        f"{len(docs)} documents a run, {chars:.0f} characters on average, tokenizer {recipe.tokenizer}; "
        f"{os.cpu_count()} cores; redis-py {redis.__version__}"
    )

    fingerprinter = Fingerprinter(recipe)  # loaded once here, inherited by the forked workers
    fingerprinter.fingerprint(docs[0][1])

    process, port, workdir = start_redis_server()
    admin = redis.Redis(port=port)
    uri = f"redis://127.0.0.1:{port}/0"
    print(f"redis-server {admin.info('server')['redis_version']} on 127.0.0.1:{port}, no persistence\n")
    rows: list[tuple] = []
    try:
        # 1. and 2.: scrapy-neardup, text input and fingerprints given
        all_prints = [fingerprinter.fingerprint(t) for _, t in docs]
        for mode in ("text", "batch", "store"):
            for p in procs:
                admin.flushall()
                slices = [docs[i::p] for i in range(p)]
                prints = [all_prints[i::p] for i in range(p)] if mode == "store" else None
                cpu0 = server_cpu(admin)
                results = run_parallel(
                    _neardup_worker,
                    p,
                    lambda i: (uri, recipe, slices[i], prints[i] if prints else None, mode, args.batch_size),  # noqa: B023
                )
                figures = summarise(results)
                figures["server_us"] = 1e6 * (server_cpu(admin) - cpu0) / figures["docs"]
                label = (
                    "scrapy-neardup "
                    + {
                        "text": "text -> verdict",
                        "batch": f"text -> verdict, batches of {args.batch_size}",
                        "store": "store only (fingerprints given)",
                    }[mode]
                )
                rows.append((label, p, figures, load()))
                print(_row(*rows[-1]), flush=True)

        # 4. datasketch MinHashLSH on Redis, same documents
        if args.compare == "datasketch":
            for p in procs:
                admin.flushall()
                slices = [docs[i::p] for i in range(p)]
                cpu0 = server_cpu(admin)
                results = run_parallel(
                    _datasketch_worker,
                    p,
                    lambda i: (port, b"dsbench", args.num_perm, args.threshold, slices[i]),  # noqa: B023
                )
                figures = summarise(results)
                figures["server_us"] = 1e6 * (server_cpu(admin) - cpu0) / figures["docs"]
                rows.append((f"datasketch MinHashLSH t={args.threshold:g} (Redis)", p, figures, load()))
                print(_row(*rows[-1]), flush=True)

        # 3. memory per stored document
        if not args.memory_docs:
            return _tables(rows, [])
        print(
            f"\nmemory: fingerprinting {args.memory_docs} distinct documents in a pool of {os.cpu_count()} ...",
            flush=True,
        )
        started = time.time()
        texts = fillers.chunk(0, args.memory_docs)
        chunks = [
            (texts[i : i + 500], args.compare == "datasketch" and i < args.ds_memory_docs, args.num_perm)
            for i in range(0, len(texts), 500)
        ]
        with multiprocessing.get_context("fork").Pool(os.cpu_count()) as pool:
            computed = [item for chunk in pool.imap(_fingerprint_chunk, chunks) for item in chunk]
        print(f"  ({time.time() - started:.0f} s)")
        memory_rows = []
        for ttl in [None] + ([args.memory_ttl] if args.memory_ttl else []):
            admin.flushall()
            before, cpu0 = used_memory(admin), server_cpu(admin)
            with open_store(uri, NAMESPACE, recipe, ttl=ttl, redis_allow_no_persistence=True) as store:
                detector = Detector(store)
                t0 = time.perf_counter()
                for i, (fingerprint, _) in enumerate(computed):
                    detector.check_fingerprint(f"https://site{i % 7}.example/news/2024/{i}.html", fingerprint)
                elapsed = time.perf_counter() - t0
                stored = store.count()
            after, server_us = used_memory(admin), 1e6 * (server_cpu(admin) - cpu0) / len(computed)
            label = "scrapy-neardup" + (f", ttl {ttl:g} s" if ttl else ", no ttl")
            memory_rows.append(
                (label, stored, (after - before) / stored, len(computed) / elapsed, server_us, admin.dbsize())
            )
            print(
                f"  {label}: {stored} stored, {(after - before) / stored:.0f} B/doc, "
                f"{len(computed) / elapsed:.0f} check-and-add/s at fill, {admin.dbsize()} keys",
                flush=True,
            )
        if args.compare == "datasketch":
            admin.flushall()
            before, cpu0 = used_memory(admin), server_cpu(admin)
            lsh = _datasketch_lsh(port, b"dsmem", args.num_perm, args.threshold)
            t0 = time.perf_counter()
            with lsh.insertion_session(buffer_size=1000) as session:
                for i, (_, m) in enumerate(computed[: args.ds_memory_docs]):
                    session.insert(f"https://site{i % 7}.example/news/2024/{i}.html", m, check_duplication=False)
            elapsed = time.perf_counter() - t0
            after = used_memory(admin)
            stored = min(len(computed), args.ds_memory_docs)
            memory_rows.append(
                (
                    "datasketch MinHashLSH (Redis, insertion session)",
                    stored,
                    (after - before) / stored,
                    stored / elapsed,
                    1e6 * (server_cpu(admin) - cpu0) / stored,
                    admin.dbsize(),
                )
            )
            print(
                f"  datasketch: {stored} stored, {(after - before) / stored:.0f} B/doc, {admin.dbsize()} keys",
                flush=True,
            )
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    _tables(rows, memory_rows)


def _tables(rows: list[tuple], memory_rows: list[tuple]) -> None:
    print(
        "\n| method | procs | docs/s | CPU ms/doc (clients) | fingerprint ms/doc | store call ms/doc "
        "| redis-server CPU µs/doc | duplicates | load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for row in rows:
        print(_row(*row))
    if memory_rows:
        print("\n| store | documents | used_memory B/doc | inserts/s (one process) | redis-server CPU µs/doc | keys |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, stored, per_doc, rate, server_us, keys in memory_rows:
            print(f"| {label} | {stored} | {per_doc:,.0f} | {rate:,.0f} | {server_us:.0f} | {keys:,} |")


def _row(label: str, procs: int, f: dict, load_text: str) -> str:
    return (
        f"| {label} | {procs} | {f['rate']:,.0f} | {f['cpu_ms']:.2f} | {f['fp_ms']:.2f} | "
        f"{f['store_ms']:.2f} | {f['server_us']:.0f} | {f['duplicates']} | {load_text} |"
    )


if __name__ == "__main__":
    sys.exit(main())
