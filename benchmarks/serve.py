"""``neardup serve`` under load: checks per second, latency and the server's memory.

Starts ``neardup serve`` as one process on 127.0.0.1, adds ``--entries`` knowledge-base
entries (People's Daily sentences recombined into distinct texts of 300 to 2,000 characters,
``corpus.FillerTexts``) through ``POST /entries``, then sends ``--checks`` ``POST /check``
requests from ``--clients`` concurrent keep-alive connections of one asyncio client on the same
machine: half of them edited copies of stored entries (listed with their shared passages
marked), half new texts. Prints the add rate, checks per second, latency percentiles, the
server's RSS every ``--rss-every`` checks, and the load: the CPU the server, the client and
everything else on the machine used meanwhile, and the load average. The server's CPU and RSS
are those of the service process and its fingerprint workers together; the CPU of the service
process alone is printed too (its reactor thread answers one request at a time). Then it offers ``--rate``
checks a second for ``--rate-seconds`` (each latency counted from the moment its check was due)
and stops the server with SIGTERM.

With ``--tree A --tree B`` one server runs from each source tree (a checkout whose C kernel is
built), each over its own store filled the same way, and the checks go to them in turns of
``--rss-every`` (A, B, A, B, ...), so that both see the same load on a shared machine: compare
their figures within one run. Before the timed checks, each server answers every distinct
check once, and the trees must answer alike (verdicts, entries, similarities, passages): the
benchmark stops at the first difference. Compared trees get their entries from one client, in
one order, so that their stores number them alike. The client is this process, one asyncio loop over keep-alive
connections; it uses a small share of a core, printed with the rest.

    python benchmarks/serve.py                                     # LevelDB store in a temp dir
    python benchmarks/serve.py --store memory:// --checks 20000
    python benchmarks/serve.py --store redis://127.0.0.1:6379/5 --namespace bench
    python benchmarks/serve.py --tree ../main --tree .             # before and after, in turns
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import FillerTexts, add_data_option, load_articles, reprint, sentence_pool

LISTENING = re.compile(r"neardup serve: http://127\.0\.0\.1:(\d+)/")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (the service's fingerprint workers; Linux /proc)."""
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def service_cpu_seconds(pid: int) -> float:
    """CPU seconds of the service: its process and its live worker processes."""
    total = cpu_seconds(pid)
    for child in children(pid):
        try:
            total += cpu_seconds(child)
        except OSError:  # it ended meanwhile
            pass
    return total


def machine_busy_seconds() -> float:
    """CPU seconds every core of the machine spent busy since boot (all processes)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / TICKS


def rss_mib(pid: int) -> float:
    """Resident memory of the service: its process and its live worker processes."""
    total = 0.0
    for each in [pid, *children(pid)]:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            pass
    return total


def request_bytes(method: str, path: str, body: dict) -> bytes:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    return head.encode("ascii") + data


async def _one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes) -> tuple[int, bytes]:
    writer.write(data)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    return status, await reader.readexactly(length)


async def send_all(
    port: int, requests: list[bytes], clients: int, answers: list[bytes] | None = None
) -> tuple[list[float], list[int]]:
    """Send ``requests`` over ``clients`` keep-alive connections, each taking the next one as it
    is answered; the latency of each (seconds) and the status codes (and each answer's body in
    ``answers``, when given)."""
    latencies: list[float] = [0.0] * len(requests)
    statuses: list[int] = [0] * len(requests)
    bodies: list[bytes] = answers if answers is not None else []
    bodies.extend([b""] * (len(requests) if answers is not None else 0))
    next_index = iter(range(len(requests)))

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for index in next_index:
                started = time.perf_counter()
                statuses[index], body = await _one(reader, writer, requests[index])
                latencies[index] = time.perf_counter() - started
                if answers is not None:
                    bodies[index] = body
        finally:
            writer.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, statuses


async def send_at_rate(
    port: int, requests: list[bytes], clients: int, rate: float
) -> tuple[list[float], list[int], float]:
    """Send ``requests`` at ``rate`` a second in all, over ``clients`` connections: request i is
    due at i / rate seconds, and its latency counts from then (time spent waiting behind a
    slow answer counts too). The latencies, the statuses and the seconds the sending took."""
    latencies: list[float] = [0.0] * len(requests)
    statuses: list[int] = [0] * len(requests)
    start = time.perf_counter() + 0.1

    async def client(first: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for index in range(first, len(requests), clients):
                due = start + index / rate
                wait = due - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
                statuses[index], _ = await _one(reader, writer, requests[index])
                latencies[index] = time.perf_counter() - due
        finally:
            writer.close()

    await asyncio.gather(*(client(first) for first in range(clients)))
    return latencies, statuses, time.perf_counter() - start


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def package_dir(pid: int) -> str:
    """Where the server's package was imported from, read off its loaded C kernel."""
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        if "scrapy_neardup" in line and "_kernel" in line:
            return line.split()[-1].split("/scrapy_neardup/")[0]
    return "?"


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def start_server(args: argparse.Namespace, store: str, tree: str | None = None) -> tuple[subprocess.Popen, int, str]:
    handle, path = tempfile.mkstemp(prefix="neardup-serve-bench-", suffix=".log")
    command = [
        sys.executable,
        "-m",
        "scrapy_neardup",
        "serve",
        "--store",
        store,
        "--namespace",
        args.namespace,
        "--port",
        "0",
        "--log-level",
        "INFO",
        *(["--workers", str(args.workers)] if args.workers is not None else []),
    ]
    env = dict(os.environ)
    if tree is not None:  # the package of that source tree, ahead of the installed one
        env["PYTHONPATH"] = os.pathsep.join([str(Path(tree).resolve()), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    # python -m puts the working directory first on the path: run in the tree (or a neutral one)
    cwd = tree if tree is not None else tempfile.gettempdir()
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    os.close(handle)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = LISTENING.search(Path(path).read_text(errors="replace"))
        if found:
            return process, int(found.group(1)), path
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"neardup serve did not start:\n{Path(path).read_text(errors='replace')[-3000:]}")


class Server:
    """One ``neardup serve`` process under test and what its checks measured so far."""

    def __init__(self, args: argparse.Namespace, tree: str | None, store: str):
        self.name = tree or "this checkout"
        self.clients = args.clients
        self.store = store
        self.process, self.port, self.log = start_server(args, store, tree)
        self.latencies: list[float] = []
        self.statuses: list[int] = []
        self.seconds = self.server_cpu = self.main_cpu = self.client_cpu = self.busy = 0.0
        self.rss = [(0, rss_mib(self.process.pid))]
        self.loads: list[float] = []
        self.answers: list[bytes] = []  # to each distinct check, in order

    def check(self, requests: list[bytes]) -> None:
        """Send ``requests`` from the clients, adding their latencies, time and CPU to the totals."""
        server_cpu, client_cpu, busy = service_cpu_seconds(self.process.pid), cpu_seconds(), machine_busy_seconds()
        main_cpu = cpu_seconds(self.process.pid)
        started = time.perf_counter()
        latencies, statuses = asyncio.run(send_all(self.port, requests, self.clients))
        self.seconds += time.perf_counter() - started
        self.server_cpu += service_cpu_seconds(self.process.pid) - server_cpu
        self.main_cpu += cpu_seconds(self.process.pid) - main_cpu
        self.client_cpu += cpu_seconds() - client_cpu
        self.busy += machine_busy_seconds() - busy
        self.latencies += latencies
        self.statuses += statuses
        self.rss.append((len(self.statuses), rss_mib(self.process.pid)))
        self.loads.append(float(load_average().split()[0]))

    def stop(self) -> None:
        self.process.terminate()
        code = self.process.wait(60)
        print(f"- {self.name}: server stopped by SIGTERM, exit code {code}")
        os.unlink(self.log)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_option(parser)
    parser.add_argument("--store", default="", help="store URI (default: a new LevelDB store in a temp dir)")
    parser.add_argument("--namespace", default="serve-bench")
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--checks", type=int, default=100_000, help="checks sent to each server")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--distinct", type=int, default=4000, help="distinct check texts, sent in turn")
    parser.add_argument("--rss-every", type=int, default=10_000, help="checks between RSS samples (and turns)")
    parser.add_argument("--rate", type=float, default=500, help="checks a second offered in the fixed-rate run")
    parser.add_argument("--rate-seconds", type=float, default=30, help="length of the fixed-rate run (0: none)")
    parser.add_argument("--tree", action="append", help="run the server from this source tree (repeat to compare)")
    parser.add_argument("--seed", type=int, default=1998)
    parser.add_argument(
        "--workers", type=int, default=None, help="neardup serve --workers N (default: its own; 0: one process)"
    )
    args = parser.parse_args(argv)
    trees = args.tree or [None]
    if args.store and len(trees) > 1:
        parser.error("--store serves one tree; several trees get a LevelDB store each")

    rng = random.Random(args.seed)
    fillers = FillerTexts(sentence_pool(load_articles(args.data)), seed=args.seed, chars=(300, 2000))
    entries = fillers.chunk(0, args.entries)
    fresh = fillers.chunk(args.entries, args.entries + args.distinct // 2)
    copies = [reprint(entries[rng.randrange(len(entries))], rng) for _ in range(args.distinct - len(fresh))]
    texts = [t for pair in zip(copies, fresh) for t in pair]
    checks = [request_bytes("POST", "/check", {"text": t}) for t in texts]
    adds = [request_bytes("POST", "/entries", {"key": f"entry-{i}", "text": t}) for i, t in enumerate(entries)]

    temp = tempfile.TemporaryDirectory(prefix="neardup-serve-bench-")
    servers: list[Server] = []
    try:
        print(f"## neardup serve: {args.entries:,} entries, {args.checks:,} checks from {args.clients} clients\n")
        print(
            f"one server process per source tree, client on the same machine, {os.cpu_count()} cores, "
            f"load average before: {load_average()}\n"
        )
        for number, tree in enumerate(trees):
            server = Server(args, tree, args.store or f"leveldb://{temp.name}/store-{number}")
            servers.append(server)
            started = time.perf_counter()
            # Compared trees get their entries in one order (one client), so that their stores
            # give the same ids, and their answers can be compared whole.
            adders = args.clients if len(trees) == 1 else 1
            latencies, statuses = asyncio.run(send_all(server.port, adds, adders))
            took = time.perf_counter() - started
            print(
                f"- {server.name} (package from {package_dir(server.process.pid)}, "
                f"store {server.store.split('@')[-1]}, pid {server.process.pid}): adds from {adders} client(s): "
                f"{len(adds):,} in {took:.1f} s, {len(adds) / took:,.0f}/s ({statuses.count(201):,} added, "
                f"{statuses.count(409):,} refused as duplicates, p99 {percentile(latencies, 0.99) * 1000:.1f} ms)"
            )
            # Warm-up: every distinct check once, its answer kept to compare the trees'.
            asyncio.run(send_all(server.port, checks, args.clients, server.answers))
            server.rss = [(0, rss_mib(server.process.pid))]
        if len(servers) > 1:
            compare_answers(servers)

        order = [checks[i % len(checks)] for i in range(args.checks)]
        for first in range(0, len(order), args.rss_every):
            for server in servers:
                server.check(order[first : first + args.rss_every])
        print()
        for server in servers:
            report(server, args)
        if args.rate_seconds > 0:
            for server in servers:
                paced_run(server, checks, args)
    finally:
        for server in servers:
            server.stop()
        temp.cleanup()


def compare_answers(servers: list[Server]) -> None:
    """The trees must answer every distinct check alike (verdict, entries, similarity, passages);
    the first difference stops the benchmark."""
    first = servers[0]
    for other in servers[1:]:
        for index, (mine, theirs) in enumerate(zip(first.answers, other.answers)):
            if json.loads(mine) != json.loads(theirs):
                raise SystemExit(
                    f"check {index}: {first.name} and {other.name} answer differently:\n"
                    f"{mine[:2000]!r}\n{theirs[:2000]!r}"
                )
    print(f"\n- the {len(first.answers):,} distinct checks: every tree gave the same answers\n")


def report(server: Server, args: argparse.Namespace) -> None:
    took, checked, cores = server.seconds, len(server.statuses), os.cpu_count() or 1
    latencies = server.latencies
    others = max(0.0, server.busy - server.server_cpu - server.client_cpu)
    print(f"### {server.name}\n")
    print(
        f"- checks, {args.clients} clients each sending its next check when answered: "
        f"{checked:,} in {took:.1f} s: **{checked / took:,.0f} checks/s**, "
        f"latency p50 {percentile(latencies, 0.5) * 1000:.1f} ms, p90 {percentile(latencies, 0.9) * 1000:.1f} ms, "
        f"**p99 {percentile(latencies, 0.99) * 1000:.1f} ms**, max {max(latencies) * 1000:.1f} ms; "
        f"{checked - server.statuses.count(200)} answers other than 200; with every client waiting for "
        f"its answer the mean latency is {args.clients} / rate = {args.clients / checked * took * 1000:.1f} ms "
        f"(Little's law), whatever the order of the answers"
    )
    print("- server RSS (MiB) after N checks: " + ", ".join(f"{n:,}: {m:.1f}" for n, m in server.rss))
    print(
        f"- CPU over these checks ({took:.0f} s, {cores} cores = {took * cores:.0f} core-s): "
        f"server {server.server_cpu:.0f} s (**{server.server_cpu / checked * 1000:.2f} ms a check**, "
        f"{server.server_cpu / took:.2f} cores; the service process alone, without its workers, "
        f"{server.main_cpu / checked * 1000:.2f} ms a check), client {server.client_cpu:.0f} s "
        f"({server.client_cpu / took:.2f} cores), other processes {others:.0f} s ({others / took:.2f} cores); "
        f"1-minute load average {min(server.loads):.1f}-{max(server.loads):.1f}"
    )


def paced_run(server: Server, checks: list[bytes], args: argparse.Namespace) -> None:
    count = int(args.rate * args.rate_seconds)
    paced = [checks[i % len(checks)] for i in range(count)]
    server_cpu = service_cpu_seconds(server.process.pid)
    latencies, statuses, took = asyncio.run(send_at_rate(server.port, paced, args.clients, args.rate))
    server_cpu = service_cpu_seconds(server.process.pid) - server_cpu
    print(
        f"- {server.name}: checks offered at {args.rate:,.0f}/s by {args.clients} clients for {args.rate_seconds:.0f} s: "
        f"{count / took:,.0f} checks/s answered, latency from each check's due time p50 "
        f"{percentile(latencies, 0.5) * 1000:.1f} ms, p90 {percentile(latencies, 0.9) * 1000:.1f} ms, "
        f"**p99 {percentile(latencies, 0.99) * 1000:.1f} ms**, max {max(latencies) * 1000:.1f} ms; "
        f"server CPU {server_cpu / count * 1000:.2f} ms a check; {len(statuses) - statuses.count(200)} answers "
        f"other than 200; load average after: {load_average()}"
    )


if __name__ == "__main__":
    main()
