"""The test suite's time: the README's test command, its wall time and the CPU of its process tree.

The suite starts many processes (``scrapy crawl``, crawl workers, ``neardup`` commands,
redis-server and Redis Cluster nodes, a browser); its CPU, not its wall time, is the steady
figure on a shared machine. The script runs the command, reads every process of its tree from
/proc a few times a second (Linux), and prints the wall time, the CPU the command's children
reported at exit (``getrusage``: every process reaped in the tree), the CPU of the processes
it saw, and that CPU by kind of process, with the pass line of pytest.

    python benchmarks/suite.py                        # the README's command
    python benchmarks/suite.py -- -n auto tests/crawl  # other pytest arguments
    python benchmarks/suite.py --tree /tmp/base        # another tree (git archive ... | tar -x)
    python benchmarks/suite.py --log suite.log -- -q -n auto --dist load --maxschedchunk 1 --durations=40

A tree given with ``--tree`` runs from its own folder with itself first on PYTHONPATH, so that
the tests and every process they start import that tree's package (its C kernel built in it).
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
README_COMMAND = ["-q", "-n", "auto", "--dist", "load", "--maxschedchunk", "1"]

# Kind of a process, by the first word found in its command line.
KINDS = [
    # The tests' server and the commands and racers forked from it (tests/support/processes.py):
    # a fork keeps its server's command line.
    ("multiprocessing.forkserver", "forked from the tests' server"),
    ("crawl.worker", "crawl worker"),
    ("-m scrapy_neardup", "neardup command"),
    ("scrapy", "scrapy crawl or script"),
    ("run_distributed.py", "scrapy crawl or script"),
    ("run_example.py", "scrapy crawl or script"),
    ("neardup", "neardup command"),
    ("[cluster]", "Redis Cluster node"),
    ("redis-sentinel", "redis-server or sentinel"),
    ("redis-server", "redis-server or sentinel"),
    ("chrom", "browser"),
    ("execnet", "pytest worker"),
    ("exec(eval(sys.stdin.readline()))", "pytest worker"),
    ("pytest", "pytest"),
]


def kind(command: str) -> str:
    for word, name in KINDS:
        if word in command:
            return name
    return "other Python" if "python" in command else "other"


def tree_of(root: int) -> dict[int, tuple[str, float, int]]:
    """pid -> (command line, CPU seconds, start time) of ``root`` and every process below it."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
    below = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in below and pid not in below:
                below.add(pid)
                grew = True
    found = {}
    for pid in below:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # utime and stime are fields 14 and 15 of stat; fields[0] here is field 3; starttime 22.
        found[pid] = (command.strip(), (int(fields[11]) + int(fields[12])) / TICKS, int(fields[19]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (default: the README's)")
    parser.add_argument("--tree", type=Path, help="run the suite of this tree (default: this one)")
    parser.add_argument("--log", type=Path, help="write pytest's output to this file")
    parser.add_argument("--every", type=float, default=0.25, help="seconds between two reads of /proc")
    args = parser.parse_args()
    command = [sys.executable, "-m", "pytest", *(args.pytest_args or README_COMMAND)]
    env = dict(os.environ)
    if args.tree:
        tree = args.tree.resolve()
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))
    print("$", " ".join(command[1:]), f"(in {args.tree})" if args.tree else "", flush=True)
    start = time.monotonic()
    seen: dict[tuple[int, int], tuple[str, float]] = {}  # (pid, start time) -> (command, CPU)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        run = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=args.tree, env=env)
        while run.poll() is None:
            for pid, (line, cpu, started) in tree_of(run.pid).items():
                known = seen.get((pid, started))
                # A process that has exited (a zombie) has no command line: keep the one seen first.
                seen[(pid, started)] = (known[0] if known and known[0] else line, cpu)
            time.sleep(args.every)
        log.seek(0)
        output = log.read()
        lines = output.splitlines() or [""]
    if args.log:
        args.log.write_text(output, encoding="utf-8")
    wall = time.monotonic() - start
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    by_kind: dict[str, float] = collections.Counter()
    count: dict[str, int] = collections.Counter()
    for line, cpu in seen.values():
        by_kind[kind(line)] += cpu
        count[kind(line)] += 1
    print(next((line for line in reversed(lines) if " passed" in line or " failed" in line), lines[-1]))
    print(f"wall {wall:.1f} s, load average at the end {os.getloadavg()[0]:.1f}")
    print(f"CPU of the tree (getrusage of the reaped children): {children.ru_utime + children.ru_stime:.1f} s")
    print(f"CPU of the processes seen ({len(seen)}): {sum(by_kind.values()):.1f} s")
    for name, cpu in sorted(by_kind.items(), key=lambda item: -item[1]):
        print(f"  {cpu:7.1f} s  {count[name]:4d} processes  {name}")
    sys.exit(run.returncode)


if __name__ == "__main__":
    main()
