"""CPU of ``neardup`` commands, each a whole process, for one or more source trees in turns.

The test suite and a user's scripts start a process per command, so what a command imports
before it does its work is paid each time: ``--help``, a wrong store URI, ``info`` and ``list``
of a LevelDB store, ``dedup`` of four records, ``explain`` of two texts. Each round runs every
command once per tree, the trees in alternating order, and the script prints the median CPU
(user + system, from the kernel's accounting of the child) of each and its ratio to the
first tree's. CPU is the steady figure on a shared machine; wall time follows the load.

    python benchmarks/cli_start.py                                   # this tree
    python benchmarks/cli_start.py --tree main=/tmp/main --tree branch=. --rounds 7

A tree given with ``--tree NAME=DIR`` is put first on PYTHONPATH (``git archive COMMIT | tar
-x -C DIR`` makes one; build its C kernel in place to compare like with like).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

STORY = (
    "本报北京三月十二日电 记者从国家铁路集团获悉，今年春运期间全国铁路累计发送旅客超过三亿人次，"
    "同比增长百分之八点六，创下历史同期新高。\n据介绍，为应对客流高峰，铁路部门在节前节后共加开旅客列车"
    "一万二千余列，其中夜间高铁和跨线动车组的开行数量比去年明显增加。多个车站延长了售票窗口的服务时间。\n"
    "铁路部门还表示，春运期间电子客票的使用比例进一步提高，刷身份证进站已覆盖全部高铁车站，旅客平均进站"
    "时间缩短到十秒以内。下一步将继续优化列车运行图，提升中西部地区的运输能力。"
)


def commands(work: Path, store: str) -> dict[str, list[str]]:
    feed, a, b = str(work / "feed.jsonl"), str(work / "a.txt"), str(work / "b.txt")
    return {
        "--help": ["--help"],
        "--version": ["--version"],
        "dedup, a wrong Redis URI": ["dedup", feed, "--store", "redis://127.0.0.1:1/abc"],
        "info, LevelDB": ["info", "--store", store],
        "list, LevelDB": ["list", "--store", store],
        "dedup, 4 records": ["dedup", feed, "-o", os.devnull, "--no-progress"],
        "explain A B": ["explain", a, b, "--color", "never"],
    }


def cpu_of(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """CPU seconds of the process (and any it waited for) and its exit code. It runs in
    ``cwd``, away from any source tree: ``python -m`` puts the current folder first on the path."""
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, process.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR, a source tree (repeatable)")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command and tree")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    trees = dict(tree.split("=", 1) for tree in args.tree) or {"this tree": str(here)}

    work = Path(tempfile.mkdtemp(prefix="neardup-cli-start-"))
    records = [{"url": f"https://{n}.example/rail", "text": ("转载\n" if n else "") + STORY} for n in range(4)]
    (work / "feed.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    (work / "a.txt").write_text(STORY, "utf-8")
    (work / "b.txt").write_text("转载自滨江日报网\n" + STORY, "utf-8")
    envs, stores = {}, {}
    for name, tree in trees.items():
        path = os.pathsep.join(filter(None, [str(Path(tree).resolve()), os.environ.get("PYTHONPATH")]))
        envs[name] = {**os.environ, "PYTHONPATH": path, "NEARDUP_STATE_DIR": str(work / "state")}
        stores[name] = f"leveldb://{work / name.replace('/', '_')}"
        fill = ["dedup", str(work / "feed.jsonl"), "-o", os.devnull, "--no-progress", "--store", stores[name]]
        cpu_of([sys.executable, "-m", "scrapy_neardup", *fill], envs[name], work)  # the store, and a warm table cache

    cpu: dict[tuple[str, str], list[float]] = {}
    codes: dict[tuple[str, str], set[int]] = {}
    for round_ in range(args.rounds):
        order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
        for name in order:
            for label, command in commands(work, stores[name]).items():
                seconds, code = cpu_of([sys.executable, "-m", "scrapy_neardup", *command], envs[name], work)
                cpu.setdefault((label, name), []).append(seconds)
                codes.setdefault((label, name), set()).add(code)
    shutil.rmtree(work)

    first = next(iter(trees))
    load = os.getloadavg()[0]
    print(f"{args.rounds} rounds, median CPU seconds (user + system) of each command; load average {load:.1f}")
    print(f"{'command':28}" + "".join(f" {name[:14]:>14}" for name in trees) + "  ratio to " + first)
    for label in commands(work, ""):
        medians = {name: statistics.median(cpu[(label, name)]) for name in trees}
        ratios = " ".join(f"{medians[name] / medians[first]:.2f}" for name in trees if name != first)
        exits = ",".join(str(c) for name in trees for c in sorted(codes[(label, name)]))
        print(f"{label:28}" + "".join(f" {medians[name]:14.3f}" for name in trees) + f"  {ratios}  (exit {exits})")


if __name__ == "__main__":
    main()
