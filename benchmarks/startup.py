"""Start-up: one record through ``neardup dedup``, as whole processes, against ``python -c "import numpy"``.

A knowledge-base entry check or a small batch starts a process per call, so the start-up is
what it pays. Each round runs the baseline and every configuration once, in turn, so that
the machine's drift touches all of them alike; the script prints min and median wall time
of each and the median of the per-round ratios to the baseline.

Configurations: the prepared-table cache warm (the usual case) with each installed
tokenizer, and cold (an empty cache directory each run: the first start after installing);
the imports of a crawl's worker process (the rest of its start is the tables, as dedup's);
with ``--base DIR``, also the source tree of another commit (``git archive COMMIT | tar -x
-C DIR``, its C kernel built in place) on the default tokenizer, in the same rounds.

    python benchmarks/startup.py --rounds 15 [--base /tmp/before]
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
import time
from importlib.util import find_spec
from pathlib import Path

from trees import check_base

RECORD = {
    "url": "https://news.example.cn/2024/0518/1.html",
    "text": (
        "新华社北京5月18日电 国家统计局今天发布数据，四月份全国规模以上工业增加值同比增长百分之六点七，"
        "比上月加快二点二个百分点。其中，装备制造业增加值增长百分之九点七，高技术制造业增长百分之十一点三。"
        "国家统计局新闻发言人表示，四月份国民经济延续回升向好态势，生产需求稳步恢复，就业物价总体稳定。"
        "同时也要看到，外部环境复杂性、严峻性、不确定性明显上升，国内有效需求仍显不足。\n"
        "从消费看，四月份社会消费品零售总额同比增长百分之二点三，其中服务零售额增长较快。"
        "从投资看，一至四月份全国固定资产投资同比增长百分之四点二，制造业投资保持较快增长。"
    ),
}


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="runs of each configuration")
    parser.add_argument("--base", type=Path, help="source tree of another commit to time too")
    args = parser.parse_args()
    if problem := check_base(args.base):
        parser.error(problem)

    repo = Path(__file__).resolve().parent.parent
    work = Path(tempfile.mkdtemp(prefix="neardup-startup-"))
    record = work / "one.jsonl"
    record.write_text(json.dumps(RECORD, ensure_ascii=False) + "\n", encoding="utf-8")
    warm_cache = work / "cache"

    def dedup(tokenizer: str, tree: Path = repo) -> list[str]:
        # The package from ``tree`` first on the path, as the ``neardup`` script would run it.
        launch = f"import sys; sys.path.insert(0, {str(tree)!r}); from scrapy_neardup.cli import main; sys.exit(main())"
        return [
            sys.executable,
            "-c",
            launch,
            "dedup",
            str(record),
            "--store",
            "memory://",
            "--no-progress",
            "-o",
            os.devnull,
            "--tokenizer",
            tokenizer,
        ]

    def worker(tree: Path = repo) -> list[str]:
        # What a crawl's worker process imports before it loads its tables (older trees: workers).
        body = (
            "try:\n    from scrapy_neardup.crawl.worker_process import serve\n"
            "except ImportError:\n    from scrapy_neardup.crawl.workers import serve"
        )
        return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tree)!r})\n{body}"]

    tokenizers = ["jieba"] + (["rjieba"] if find_spec("rjieba") else [])
    default = tokenizers[-1]
    # name -> (command, cache directory or None for a new empty one each run)
    configurations: dict[str, tuple[list[str], Path | None]] = {
        "python -c 'import numpy'": ([sys.executable, "-c", "import numpy"], warm_cache),
    }
    if find_spec("rjieba"):  # the imports alone, a floor for the rjieba runs
        configurations["python -c 'import numpy, rjieba'"] = (
            [sys.executable, "-c", "import numpy, rjieba"],
            warm_cache,
        )
    for tokenizer in tokenizers:
        configurations[f"dedup, {tokenizer}, cache warm"] = (dedup(tokenizer), warm_cache)
    configurations[f"dedup, {default}, cache cold"] = (dedup(default), None)
    configurations["a crawl's worker, imports"] = (worker(), warm_cache)
    if args.base:
        configurations[f"dedup, {default}, --base tree"] = (dedup(default, args.base), warm_cache)
        configurations["a crawl's worker, imports, --base tree"] = (worker(args.base), warm_cache)

    base_env = dict(os.environ)
    # An installed package has its byte code compiled; let every run write and use it.
    base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    base_env["NEARDUP_CACHE_DIR"] = str(warm_cache)
    timed(dedup(default), base_env)  # fills the warm cache (and the OS's file cache)
    times: dict[str, list[float]] = {name: [] for name in configurations}
    for _ in range(args.rounds):
        for name, (command, cache) in configurations.items():
            env = dict(base_env)
            if cache is None:
                cold = Path(tempfile.mkdtemp(dir=work))
                env["NEARDUP_CACHE_DIR"] = str(cold)
            times[name].append(timed(command, env))
            if cache is None:
                shutil.rmtree(cold)
    shutil.rmtree(work)

    baseline = times["python -c 'import numpy'"]
    print(f"{args.rounds} rounds, wall seconds of each whole process")
    print(f"{'':40} {'min':>7} {'median':>7} {'x numpy (median of rounds)':>27}")
    for name, values in times.items():
        ratio = statistics.median(v / b for v, b in zip(values, baseline))
        print(f"{name:40} {min(values):7.3f} {statistics.median(values):7.3f} {ratio:27.2f}")


if __name__ == "__main__":
    main()
