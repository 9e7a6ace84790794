"""Three ``scrapy crawl`` processes fed by scrapy-redis's shared queue, sharing one Redis store:
the example project's ``run_distributed.py``, run the way a user runs it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.crawls import without_unused_extensions

pytest.importorskip("scrapy_redis", reason="scrapy-redis is not installed (pip install -e '.[test]')")

EXAMPLE = Path(__file__).resolve().parents[2] / "example_project"
CRAWL_TIMEOUT = 600  # seconds; a run takes 10-30 s on an idle machine


def _run_distributed(tmp_path: Path, redis_url: str, *args: str) -> subprocess.CompletedProcess:
    project = tmp_path / "example_project"
    if not project.exists():
        shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".scrapy", "output", "__pycache__"))
        without_unused_extensions(project)
    env = dict(os.environ, PYTHONPATH=str(project))
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return subprocess.run(
        # A process closes 1 s after it last found work, not 5: the queue is on this machine.
        [sys.executable, "run_distributed.py", "--redis-url", redis_url, "--max-idle", "1", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=CRAWL_TIMEOUT,
    )


def _kept(tmp_path: Path) -> list[dict]:
    items = []
    for feed in sorted((tmp_path / "example_project" / "output" / "distributed").glob("*/articles.jsonl")):
        items += [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
    return items


@pytest.mark.parametrize("store", ["redis", "cluster"])
def test_three_processes_keep_every_story_once_over_repeated_runs(tmp_path, redis_url, store, request):
    """The same crawl with the store on the queue's Redis, and on a Redis Cluster: only the
    store's URI changes."""
    extra = ("--store", request.getfixturevalue("cluster_url")) if store == "cluster" else ()
    for _run in range(2):  # each run starts from an empty queue and namespace
        result = _run_distributed(tmp_path, redis_url, *extra)
        assert result.returncode == 0, result.stdout + result.stderr
        out = result.stdout
        assert "stored once: 16/16 stories - every story exactly once" in out, out
        assert "stories lost (all copies dropped): 0 (0 of them unique articles)" in out, out
        assert "stories stored more than once (reprints missed): 0" in out, out
        assert "pages fetched of the world's 47" in out and "fetched twice" not in out, out
        assert len(re.findall(r"exit 0, finish_reason finished", out)) == 3, out
        kept = _kept(tmp_path)
        assert len(kept) == 16 and len({item["url"] for item in kept}) == 16


def test_without_the_pipeline_every_article_is_kept_and_no_page_is_fetched_twice(tmp_path, redis_url):
    """Two processes share the queue: enough for a page fetched twice to show (three are the
    test above's)."""
    result = _run_distributed(tmp_path, redis_url, "--no-neardup", "--processes", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(re.findall(r"exit 0, finish_reason finished", result.stdout)) == 2, result.stdout
    assert "articles kept 37 of 37, kept twice 0" in result.stdout, result.stdout
    assert len(_kept(tmp_path)) == 37


def test_a_second_run_keeping_the_store_drops_every_article(tmp_path, redis_url):
    """The store is the namespace in Redis, not the processes: a second crawl of the same
    world at a new address finds every story already stored (stored there by one process)."""
    assert _run_distributed(tmp_path, redis_url, "--processes", "1").returncode == 0
    result = _run_distributed(tmp_path, redis_url, "--keep-store", "--processes", "2")
    assert "articles 37, kept 0, reprints dropped 37" in result.stdout, result.stdout
