"""The redis+cluster:// store on a local Redis Cluster, against one Redis in the same run.

Starts its own cluster (``--masters`` masters, one replica each, appendonly everysec, on
127.0.0.1) and its own redis-server, and measures:

1. **Fill** (``--fill``, 100,000 documents): server memory per stored document (``INFO memory``
   ``used_memory`` of every master, before and after), each master's share of keys and memory
   (its deviation from the mean), server CPU per document (``INFO cpu`` of the masters, and of
   the replicas, which replay every write), documents/s and client CPU per document from one
   process in batches of 64 with fingerprints made beforehand (the store's cost alone). The same
   documents go to one Redis for comparison.
2. **Throughput** (``--procs``, 1,2,4 processes, ``--docs`` each run): documents/s, client and
   server CPU per document, cluster and one Redis alternating, in batches of 64.
3. **Race** (``--race``, 4 processes): one stream of stories and their reprints dealt round-robin
   to 4 processes that check their shares at once, on one Redis and on the cluster; every story
   must be kept exactly once. Counted against the truth (which story each document tells):
   stories kept twice, stories lost, duplicates of another story; and the verdicts against one
   process checking the stream alone on the memory store.
4. **Purge** (``--purge``, documents): a store with a TTL of a day is filled, half of it dated
   18 hours back, and ``purge`` takes out what is older than 12 hours: its time, and the store's
   documents and the masters' memory before and after. Then the old half is stored again and
   purged while a checking process runs at full speed beside it: its rate in the runs that
   overlap the purge against its rate before and after; twice, the purge at full speed, then
   paced (``background=True``, as ``neardup purge --paced``). ``--fill-procs`` fills with
   several processes; ``--beside paced --beside-for S`` measures the paced purge alone, for
   ``S`` seconds at most (a large store's paced purge takes hours). With ``--base DIR``,
   ``--pairs`` pairs of namespaces filled alike are purged instead, one by a process importing
   ``DIR``'s package and one by this tree's, in turn: the ratio of their times.

The machine has two cores shared with other jobs: the load average is printed with each figure,
rates of one run are compared with each other, and what needs more cores than this (throughput
growing with masters) is left to ``--masters`` on a bigger machine.

    python benchmarks/redis_cluster.py --quick          # smoke run
    python benchmarks/redis_cluster.py                  # fill 100k, throughput, race, purge
    python benchmarks/redis_cluster.py --only fill --fill 100000 --masters 3
    python benchmarks/redis_cluster.py --only purge --purge 200000 --fill-procs 2 --beside paced --beside-for 300
    python benchmarks/redis_cluster.py --only purge --purge 10000 --base /tmp/main-tree --pairs 2
"""

from __future__ import annotations

import argparse
import functools
import json
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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import corpus  # benchmarks/corpus.py
from redis_throughput import run_parallel  # benchmarks/redis_throughput.py
from trees import check_base  # benchmarks/trees.py

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, Fingerprinter, Recipe, open_store

CREATE_SECONDS = 120  # redis-cli --cluster create waits for the nodes to meet, with no end of its own

BATCH = 64
PROBE_RUN = 300  # documents a run of the checking process beside a purge: a few seconds
_RUNS = iter(range(1, 1_000_000))


def namespace() -> str:
    """A namespace for one run: each run starts a store of its own."""
    return f"bench{next(_RUNS)}"


# -- servers --------------------------------------------------------------------------------


def _free_port(pair: bool = False) -> int:
    """A free port (and, with ``pair``, port + 10000 free too: a cluster node's bus)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if not pair:
            return port
        if port + 10000 < 65536:
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port + 10000))
                    return port
                except OSError:
                    continue


def _wait_for(port: int) -> None:
    import redis

    client = redis.Redis(port=port)
    for _ in range(400):
        try:
            client.ping()
            return
        except redis.ConnectionError:
            time.sleep(0.05)
    raise SystemExit(f"redis-server on port {port} did not start")


@dataclass
class Servers:
    workdir: str
    processes: list = field(default_factory=list)
    cluster_ports: list = field(default_factory=list)
    redis_port: int = 0

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_servers(masters: int) -> Servers:
    """``masters`` cluster masters with one replica each, and one plain redis-server; every one
    with appendonly everysec (the store refuses a server that keeps nothing across a restart)."""
    binary = shutil.which("redis-server")
    cli = shutil.which("redis-cli")
    if not binary or not cli:
        raise SystemExit("redis-server and redis-cli are needed: apt-get install redis-server")
    servers = Servers(tempfile.mkdtemp(prefix="neardup-bench-cluster-"))
    common = ["--bind", "127.0.0.1", "--appendonly", "yes", "--save", "", "--daemonize", "no"]
    for _ in range(2 * masters):
        port = _free_port(pair=True)
        folder = os.path.join(servers.workdir, str(port))
        os.makedirs(folder)
        args = [binary, "--port", str(port), *common, "--dir", folder, "--logfile", "redis.log"]
        args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000"]
        servers.processes.append(subprocess.Popen(args, cwd=folder))
        servers.cluster_ports.append(port)
    servers.redis_port = _free_port()
    folder = os.path.join(servers.workdir, "single")
    os.makedirs(folder)
    args = [binary, "--port", str(servers.redis_port), *common, "--dir", folder, "--logfile", "redis.log"]
    servers.processes.append(subprocess.Popen(args, cwd=folder))
    for port in [*servers.cluster_ports, servers.redis_port]:
        _wait_for(port)
    hosts = [f"127.0.0.1:{port}" for port in servers.cluster_ports]
    try:
        made = subprocess.run(
            [cli, "--cluster", "create", *hosts, "--cluster-replicas", "1", "--cluster-yes"],
            capture_output=True,
            text=True,
            timeout=CREATE_SECONDS,
        )
    except subprocess.TimeoutExpired:
        servers.stop()
        raise SystemExit(
            f"redis-cli --cluster create did not finish in {CREATE_SECONDS} s (the nodes did not meet); run again"
        ) from None
    if made.returncode:
        servers.stop()
        raise SystemExit(made.stdout + made.stderr)
    import redis

    for _ in range(600):
        states = [redis.Redis(port=p).cluster("info").get("cluster_state") for p in servers.cluster_ports]
        if all(state == "ok" for state in states):
            break
        time.sleep(0.1)
    return servers


def nodes(servers: Servers) -> tuple[list, list]:
    """Clients of the masters and of the replicas, by role now."""
    import redis

    masters, replicas = [], []
    for port in servers.cluster_ports:
        client = redis.Redis(port=port)
        (masters if client.info("replication")["role"] == "master" else replicas).append(client)
    return masters, replicas


def used_memory(clients: list) -> list[int]:
    return [int(c.info("memory")["used_memory"]) for c in clients]


def cpu_seconds(clients: list) -> float:
    return sum(float(c.info("cpu")["used_cpu_user"]) + float(c.info("cpu")["used_cpu_sys"]) for c in clients)


def flush(servers: Servers) -> None:
    import redis

    masters, _ = nodes(servers)
    for client in [*masters, redis.Redis(port=servers.redis_port)]:
        client.flushall()
    time.sleep(0.5)  # the replicas follow


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


# -- documents ------------------------------------------------------------------------------


def stream(count: int, data, seed: int = 4) -> list[tuple[str, str, str]]:
    """``count`` (key, story, text): news-length texts, a reprint of a recent one after every
    fifth (as benchmarks/redis_throughput.py), the story naming the original."""
    articles = corpus.load_articles(data)
    news = corpus.news_length_docs(articles)
    fillers = corpus.FillerTexts(corpus.sentence_pool(articles))
    rng = random.Random(seed)
    out: list[tuple[str, str, str]] = []
    originals: list[tuple[str, str]] = []
    i = 0
    while len(out) < count:
        text = news[i] if i < len(news) else fillers.text(i - len(news))
        out.append((f"https://site{i % 7}.example/{i}", f"s{i}", text))
        originals.append((f"s{i}", text))
        i += 1
        if i % 5 == 0 and len(out) < count:
            story, source = originals[rng.randrange(max(0, len(originals) - 50), len(originals))]
            out.append((f"https://reprint.example/{i}", story, corpus.reprint(source, rng)))
    return out


_RECIPE: Recipe | None = None
_FINGERPRINTER: Fingerprinter | None = None


def _fingerprints(texts: list[str]) -> list:
    global _FINGERPRINTER
    if _FINGERPRINTER is None:
        _FINGERPRINTER = Fingerprinter(_RECIPE)
    return [_FINGERPRINTER.fingerprint(t) for t in texts]


def fingerprint_all(texts: list[str]) -> list:
    """Fingerprints of ``texts``, made on every core."""
    chunks = [texts[i : i + 500] for i in range(0, len(texts), 500)]
    with multiprocessing.get_context("fork").Pool(os.cpu_count()) as pool:
        return [fp for chunk in pool.map(_fingerprints, chunks) for fp in chunk]


# -- workers --------------------------------------------------------------------------------


def _checker(uri, space, documents, barrier, queue, ttl=None, clock_offset=0.0) -> None:
    """Checks ``documents`` ((key, fingerprint) pairs) in batches in namespace ``space``; puts
    its verdicts and times."""
    options = {"ttl": ttl} if ttl else {}
    store = open_store(uri, space, _RECIPE, **options)
    detector = Detector(store, clock=lambda: time.time() + clock_offset, ttl=ttl)
    if barrier is not None:
        barrier.wait()
    cpu0, start = time.process_time(), time.time()
    verdicts = []
    for at in range(0, len(documents), BATCH):
        verdicts += [(v.key, v.status, v.duplicate_of) for v in detector.check_many(documents[at : at + BATCH])]
    end, cpu = time.time(), time.process_time() - cpu0
    store.close()
    queue.put((verdicts, start, end, cpu))


def run_checkers(uri: str, shares: list[list], space: str | None = None, **options) -> tuple[list, float, float]:
    """Each share checked by a process of its own, all starting at once, in namespace ``space``
    (default: a new one): verdicts, docs/s, and client CPU ms per document."""
    space = space or namespace()
    checker = functools.partial(_checker, **options)
    results = run_parallel(checker, len(shares), lambda p: (uri, space, shares[p]))
    docs = sum(len(share) for share in shares)
    wall = max(r[2] for r in results) - min(r[1] for r in results)
    return [v for r in results for v in r[0]], docs / wall, 1000 * sum(r[3] for r in results) / docs


# -- the parts ------------------------------------------------------------------------------


def part_fill(servers: Servers, docs: list, prints: list) -> None:
    import redis

    print(f"\n## Fill: {len(docs)} documents, one process, batches of {BATCH} ({load()})")
    masters, replicas = nodes(servers)
    single = redis.Redis(port=servers.redis_port)
    documents = [(key, fp) for (key, _, _), fp in zip(docs, prints)]
    for name, uri, watched in (
        ("cluster", cluster_uri(servers), masters),
        ("one Redis", f"redis://127.0.0.1:{servers.redis_port}/0", [single]),
    ):
        flush(servers)
        memory0, cpu0, replica0 = used_memory(watched), cpu_seconds(watched), cpu_seconds(replicas)
        verdicts, rate, client_ms = run_checkers(uri, [documents])
        time.sleep(1)  # the replicas catch up
        grown = [after - before for after, before in zip(used_memory(watched), memory0)]
        kept = sum(status == UNIQUE for _, status, _ in verdicts)
        server_us = 1e6 * (cpu_seconds(watched) - cpu0) / len(documents)
        line = (
            f"{name}: {rate:,.0f} docs/s, client CPU {client_ms:.2f} ms/doc, server CPU {server_us:,.0f} us/doc"
            f"{' (masters)' if name == 'cluster' else ''}, memory {sum(grown) / kept:,.0f} B per stored "
            f"document ({kept} stored; {load()})"
        )
        print(line)
        if name == "cluster":
            print(f"  replicas' CPU {1e6 * (cpu_seconds(replicas) - replica0) / len(documents):,.0f} us/doc")
            hashes, fields = bucket_hashes(masters)
            print(
                f"  buckets: {fields / kept:.1f} per stored document, in {hashes:,} hashes "
                f"({fields / max(1, hashes):.1f} fields a hash)"
            )
            keys = [int(c.dbsize()) for c in masters]
            for label, figures in (("keys", keys), ("memory grown", grown)):
                mean = sum(figures) / len(figures)
                spread = ", ".join(f"{f:,} ({100 * (f - mean) / mean:+.1f}%)" for f in figures)
                print(f"  {label} per master: {spread}")


_SHARDS: int | None = None  # --shards: bucket hashes per window of the cluster's namespaces


def bucket_hashes(masters: list) -> tuple[int, int]:
    """The bucket hashes on the masters, and their fields (bucket names) in all."""
    hashes = fields = 0
    for client in masters:
        names = list(client.scan_iter(match=b"*:h:*", count=1000, _type="HASH"))
        for at in range(0, len(names), 1000):
            pipe = client.pipeline(transaction=False)
            for name in names[at : at + 1000]:
                pipe.hlen(name)
            lengths = pipe.execute()
            hashes, fields = hashes + len(lengths), fields + sum(lengths)
    return hashes, fields


def cluster_uri(servers: Servers) -> str:
    query = f"?shards={_SHARDS}" if _SHARDS else ""
    return f"redis+cluster://127.0.0.1:{servers.cluster_ports[0]}/{query}"


def part_throughput(servers: Servers, docs: list, prints: list, procs: list[int]) -> None:
    import redis

    print(f"\n## Throughput: {len(docs)} documents a run, batches of {BATCH}, fingerprints given")
    masters, _ = nodes(servers)
    single = redis.Redis(port=servers.redis_port)
    documents = [(key, fp) for (key, _, _), fp in zip(docs, prints)]
    print("| store | processes | docs/s | client CPU ms/doc | server CPU us/doc | load |")
    print("|---|---|---|---|---|---|")
    for count in procs:
        for name, uri, watched in (
            ("cluster", cluster_uri(servers), masters),
            ("one Redis", f"redis://127.0.0.1:{servers.redis_port}/0", [single]),
        ):
            flush(servers)
            cpu0 = cpu_seconds(watched)
            _, rate, client_ms = run_checkers(uri, [documents[i::count] for i in range(count)])
            server_us = 1e6 * (cpu_seconds(watched) - cpu0) / len(documents)
            print(f"| {name} | {count} | {rate:,.0f} | {client_ms:.2f} | {server_us:,.0f} | {load()} |", flush=True)


def part_race(servers: Servers, docs: list, prints: list) -> None:
    print(f"\n## Race: {len(docs)} documents dealt to 4 processes, checked at once, batches of {BATCH}")
    story_of = {key: story for key, story, _ in docs}
    told = set(story_of.values())
    documents = [(key, fp) for (key, _, _), fp in zip(docs, prints)]
    with open_store("memory://", namespace(), _RECIPE) as alone:
        verdicts = [(v.key, v.status, v.duplicate_of) for v in Detector(alone).check_many(documents)]
    kept = {"one process alone": Counter(story_of[key] for key, status, _ in verdicts if status == UNIQUE)}
    print(
        f"one process alone (memory store, the stream in order): {sum(kept['one process alone'].values())} kept, "
        f"stories kept twice {sum(1 for n in kept['one process alone'].values() if n > 1)} (reprints it misses)"
    )
    for name, uri in (
        ("one Redis", f"redis://127.0.0.1:{servers.redis_port}/0"),
        ("cluster", cluster_uri(servers)),
    ):
        flush(servers)
        verdicts, rate, _ = run_checkers(uri, [documents[i::4] for i in range(4)])
        kept[name] = Counter(story_of[key] for key, status, _ in verdicts if status == UNIQUE)
        wrong = sum(1 for key, status, of in verdicts if status == DUPLICATE and story_of[of] != story_of[key])
        print(
            f"{name}, 4 processes: {sum(kept[name].values())} kept, stories kept twice "
            f"{sum(1 for n in kept[name].values() if n > 1)}, stories lost {sum(1 for s in told if not kept[name][s])}, "
            f"duplicates of another story {wrong}; {rate:,.0f} docs/s ({load()})"
        )
    for name, other in (("one Redis", "one process alone"), ("cluster", "one process alone"), ("cluster", "one Redis")):
        more = sum(max(0, kept[name][s] - kept[other][s]) for s in told)
        fewer = sum(max(0, kept[other][s] - kept[name][s]) for s in told)
        print(
            f"{name} against {other}: {more} documents more kept, {fewer} fewer "
            f"({100 * (more + fewer) / len(documents):.2f}% of the documents)"
        )


@dataclass
class PurgeRun:
    """How part_purge fills and what it runs beside the purge."""

    fill_procs: int = 1  # processes a fill is split over
    beside: tuple[str, ...] = ("full", "paced")  # the purges run beside a checking process
    beside_for: float | None = None  # seconds after which a purge beside the checker is stopped
    base: Path | None = None  # a source tree whose purge is timed against this tree's instead
    pairs: int = 2


def fill_purge_space(uri: str, space: str, old: list, new: list, ttl: float, procs: int) -> None:
    """``old`` stored dated 18 hours back, then ``new`` now, each by ``procs`` processes."""
    run_checkers(uri, [old[i::procs] for i in range(procs)], space, ttl=ttl, clock_offset=-0.75 * ttl)
    if new:
        run_checkers(uri, [new[i::procs] for i in range(procs)], space, ttl=ttl)


def part_purge(servers: Servers, docs: list, prints: list, run: PurgeRun) -> None:
    ttl = 86_400.0
    half = len(docs) // 2
    print(
        f"\n## Purge: {len(docs)} documents with a TTL of one day, {half} of them dated 18 hours back, "
        f"purged older than 12 hours (filled by {run.fill_procs} process{'es' if run.fill_procs > 1 else ''})"
    )
    masters, replicas = nodes(servers)
    uri = cluster_uri(servers)
    flush(servers)
    old = [(key, fp) for (key, _, _), fp in zip(docs[:half], prints[:half])]
    new = [(key, fp) for (key, _, _), fp in zip(docs[half:], prints[half:])]
    if run.base is not None:
        purge_pairs(uri, old, new, ttl, run)
        return
    space = namespace()
    started = time.time()
    fill_purge_space(uri, space, old, new, ttl, run.fill_procs)
    print(f"filled in {time.time() - started:.0f} s ({load()})", flush=True)
    time.sleep(1)
    # Alone: the purge's time, and the store's documents and the masters' memory before and after.
    with open_store(uri, space, _RECIPE, ttl=ttl) as store:
        before_count, before_memory = store.count(), used_memory(masters)
        servers_cpu = cpu_seconds(masters), cpu_seconds(replicas)
        started, cpu = time.time(), time.process_time()
        purged = store.purge(time.time() - ttl / 2)
        purge_seconds, cpu = time.time() - started, time.process_time() - cpu
        masters_us, replicas_us = (
            1e6 * (cpu_seconds(group) - before) / max(1, purged)
            for group, before in zip((masters, replicas), servers_cpu)
        )
        time.sleep(1)
        after_count, after_memory = store.count(), used_memory(masters)
    print(
        f"alone: purged {purged} documents in {purge_seconds:.1f} s ({purged / purge_seconds:,.0f} documents/s); "
        f"documents {before_count} -> {after_count}, masters' memory {sum(before_memory) / 1e6:.1f} -> "
        f"{sum(after_memory) / 1e6:.1f} MB ({(sum(before_memory) - sum(after_memory)) / max(1, purged):,.0f} B per "
        f"purged document; per master {', '.join(f'{b / 1e6:.1f} -> {a / 1e6:.1f}' for b, a in zip(before_memory, after_memory))} MB); "
        f"CPU per purged document: the purging process {1e3 * cpu / max(1, purged):.3f} ms, the masters {masters_us:.0f} µs, "
        f"the replicas {replicas_us:.0f} µs ({load()})",
        flush=True,
    )
    # Beside a crawl: the old half stored again, then purged while a checking process (in a
    # namespace of its own, on the same masters) checks at full speed; its rate in the runs that
    # overlap the purge against its rate before and after. At full speed, and paced (as
    # `neardup purge --paced`), in the same run.
    # The same documents every run, each run in a namespace of its own: the runs do the same work.
    probe = [(f"https://probe.example/{i}", fp) for i, fp in enumerate(prints[:PROBE_RUN])]

    def probe_run() -> float:
        return run_checkers(uri, [probe])[1]

    for how in run.beside:
        paced = how == "paced"
        fill_purge_space(uri, space, old, [], ttl, run.fill_procs)
        time.sleep(1)
        with open_store(uri, space, _RECIPE, ttl=ttl) as store:
            stored = store.count()
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        rates: dict[str, list[float]] = {"before": [], "during": [], "after": []}
        for _ in range(2):
            rates["before"].append(probe_run())
        purger = context.Process(target=_purger, args=(uri, space, ttl, queue, paced))
        purger.start()
        started = time.time()
        while purger.is_alive():
            rate = probe_run()
            if run.beside_for is not None and time.time() - started > run.beside_for and purger.is_alive():
                purger.terminate()  # stopped between two of its calls: what it took out is out
                rates["during"].append(rate)
                break
            if purger.is_alive():  # the whole run overlapped the purge
                rates["during"].append(rate)
        purger.join()
        seconds = time.time() - started
        with open_store(uri, space, _RECIPE, ttl=ttl) as store:
            purged_again = stored - store.count()
        for _ in range(2):
            rates["after"].append(probe_run())
        alone = sum(rates["before"] + rates["after"]) / 4
        during = sum(rates["during"]) / max(1, len(rates["during"]))
        stopped = " (stopped there)" if purger.exitcode else ""
        print(
            f"beside a checking process, {'paced' if paced else 'at full speed'}: purged {purged_again} in "
            f"{seconds:.1f} s{stopped} ({purged_again / seconds:,.1f} documents/s); its docs/s "
            f"{', '.join(f'{r:,.0f}' for r in rates['before'])} before, "
            f"{_rates(rates['during'])} during, "
            f"{', '.join(f'{r:,.0f}' for r in rates['after'])} after: during / (before and after) "
            f"{during / alone:.2f} ({load()})",
            flush=True,
        )


def _rates(rates: list[float]) -> str:
    """Rates of runs, each, or past ten their count, mean and range."""
    if len(rates) <= 10:
        return ", ".join(f"{r:,.0f}" for r in rates) or "no run within"
    return f"{len(rates)} runs of mean {sum(rates) / len(rates):,.0f} ({min(rates):,.0f}-{max(rates):,.0f})"


def _purger(uri: str, space: str, ttl: float, queue, paced: bool) -> None:
    with open_store(uri, space, _RECIPE, ttl=ttl) as store:
        started = time.time()
        removed = store.purge(time.time() - ttl / 2, background=paced)
        queue.put((removed, time.time() - started))


def purge_pairs(uri: str, old: list, new: list, ttl: float, run: PurgeRun) -> None:
    """Pairs of namespaces filled alike, one purged by a process importing ``run.base``'s
    package and one by this tree's, in turn (the base first in odd pairs): their times."""
    ratios = []
    for pair in range(run.pairs):
        spaces = {"base": namespace(), "this": namespace()}
        for space in spaces.values():
            fill_purge_space(uri, space, old, new, ttl, run.fill_procs)
        time.sleep(1)
        order = ["base", "this"] if pair % 2 == 0 else ["this", "base"]
        timed = {tree: _purge_in(run.base if tree == "base" else None, uri, spaces[tree], ttl) for tree in order}
        ratios.append(timed["this"]["seconds"] / timed["base"]["seconds"])
        if pair == 0:
            print(f"packages: base {timed['base']['package']}, this tree {timed['this']['package']}")
        figures = "; ".join(
            f"{tree}: {t['removed']} in {t['seconds']:.2f} s ({t['removed'] / t['seconds']:,.0f}/s), "
            f"CPU {t['cpu']:.2f} s"
            for tree, t in timed.items()
        )
        print(f"pair {pair + 1}: {figures}; this tree's time / the base's {ratios[-1]:.3f} ({load()})", flush=True)
    print(f"this tree's purge time over the base's: {', '.join(f'{r:.3f}' for r in ratios)}")


def _purge_in(tree: Path | None, uri: str, space: str, ttl: float) -> dict:
    """A purge by a process importing the package of ``tree`` (None: this tree's)."""
    here = Path(__file__).resolve().parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in (tree or here.parent, here)))
    command = [sys.executable, __file__, "--purge-child", uri, space, str(ttl)]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def purge_child(uri: str, space: str, ttl: float, tokenizer: str) -> None:
    import scrapy_neardup

    with open_store(uri, space, Recipe(tokenizer=tokenizer).resolved(), ttl=ttl) as store:
        cpu, started = time.process_time(), time.time()
        removed = store.purge(time.time() - ttl / 2)
        seconds, cpu = time.time() - started, time.process_time() - cpu
    print(json.dumps({"removed": removed, "seconds": seconds, "cpu": cpu, "package": scrapy_neardup.__file__}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus.add_data_option(parser)
    parser.add_argument("--masters", type=int, default=3, help="cluster masters, one replica each (default 3)")
    parser.add_argument("--fill", type=int, default=100_000, help="documents of the fill (default 100,000)")
    parser.add_argument("--docs", type=int, default=6000, help="documents a throughput run (default 6,000)")
    parser.add_argument("--procs", default="1,2,4", help="process counts of the throughput runs (default 1,2,4)")
    parser.add_argument("--race", type=int, default=8000, help="documents of the race (default 8,000)")
    parser.add_argument("--purge", type=int, default=40_000, help="documents of the purge run (default 40,000)")
    parser.add_argument("--only", choices=["fill", "throughput", "race", "purge"], help="one part only")
    parser.add_argument("--tokenizer", default="rjieba", choices=["rjieba", "jieba"])
    parser.add_argument(
        "--shards",
        type=int,
        help="bucket hashes per window on the cluster (default the store's, 1,048,576: sparse below "
        "millions of documents; a tenth of --fill measures the memory of a store as full as the sizing assumes)",
    )
    parser.add_argument("--fill-procs", type=int, default=1, help="processes the purge part fills with (default 1)")
    parser.add_argument(
        "--beside",
        default="full,paced",
        help="purges run beside a checking process: full, paced, both (default), or none",
    )
    parser.add_argument("--beside-for", type=float, help="seconds after which a purge beside the checker is stopped")
    parser.add_argument("--base", type=Path, help="a source tree whose purge is timed against this tree's")
    parser.add_argument("--pairs", type=int, default=2, help="pairs of purges with --base (default 2)")
    parser.add_argument("--purge-child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes")
    args = parser.parse_args()
    if args.purge_child:
        uri, space, ttl = args.purge_child
        purge_child(uri, space, float(ttl), args.tokenizer)
        return
    if problem := check_base(args.base):
        parser.error(problem)
    beside = {"both": ("full", "paced"), "none": ()}.get(args.beside, tuple(args.beside.split(",")))
    if not set(beside) <= {"full", "paced"}:
        parser.error(f"--beside: full, paced, both or none, not {args.beside}")
    purge_run = PurgeRun(args.fill_procs, beside, args.beside_for, args.base, args.pairs)
    if args.quick:
        args.fill, args.docs, args.race, args.purge = 3000, 1000, 1000, 4000
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the servers are stopped
    global _RECIPE, _SHARDS
    _RECIPE = Recipe(tokenizer=args.tokenizer).resolved()
    _SHARDS = args.shards
    sizes = {"fill": args.fill, "throughput": args.docs, "race": args.race, "purge": args.purge}
    size = sizes[args.only] if args.only else max(sizes.values())
    docs = stream(size, args.data)
    started = time.time()
    prints = fingerprint_all([text for _, _, text in docs])
    print(f"{len(docs)} documents fingerprinted in {time.time() - started:.0f} s; {os.cpu_count()} cores; {load()}")
    servers = start_servers(args.masters)
    print(f"a cluster of {args.masters} masters and {args.masters} replicas, and one Redis, on 127.0.0.1")
    try:
        if args.only in (None, "fill"):
            part_fill(servers, docs[: args.fill], prints[: args.fill])
        if args.only in (None, "throughput"):
            part_throughput(servers, docs[: args.docs], prints[: args.docs], [int(p) for p in args.procs.split(",")])
        if args.only in (None, "race"):
            part_race(servers, docs[: args.race], prints[: args.race])
        if args.only in (None, "purge"):
            part_purge(servers, docs[: args.purge], prints[: args.purge], purge_run)
    finally:
        servers.stop()


if __name__ == "__main__":
    main()
