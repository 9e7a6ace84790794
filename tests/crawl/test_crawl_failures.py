"""What ``scrapy crawl`` does when the pipeline cannot serve the crawl, run as a user runs it.

Each case runs ``python -m scrapy.cmdline crawl`` in a subprocess, in a small project
written to ``tmp_path``, against the local news site: the exit status and what is printed
are what a user sees.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import child_env, warm_python
from support.crawls import COMPAT, LEAN, settings_lines
from support.redis_server import free_port

SETTINGS = f"""
BOT_NAME = "proj"
SPIDER_MODULES = ["proj.spiders"]
ITEM_PIPELINES = {{"scrapy_neardup.NearDupPipeline": 200}}
NEARDUP_WORKERS = 0
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
{settings_lines({**COMPAT, **LEAN})}"""

SPIDER = """
from support.local_site import NewsSpider


class News(NewsSpider):
    name = "news"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (tmp_path / "proj" / "spiders").mkdir(parents=True)
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "settings.py").write_text(SETTINGS)
    (tmp_path / "proj" / "spiders" / "__init__.py").write_text("")
    (tmp_path / "proj" / "spiders" / "news.py").write_text(SPIDER)
    return tmp_path


def scrapy_crawl(project: Path, root: str, *options: str) -> subprocess.CompletedProcess:
    env = child_env(project)
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    command = [
        sys.executable,
        "-m",
        "scrapy.cmdline",
        "crawl",
        "news",
        "-a",
        f"root={root}",
        "-a",
        "paths=/a/metro.html,/b/metro.html",
        *options,
    ]
    return warm_python.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=240)


def lines_at(level: str, output: str) -> list[str]:
    return [line for line in output.splitlines() if f"] {level}: " in line]


def assert_stopped_at_open(done: subprocess.CompletedProcess, reason: str, message: str) -> None:
    """Exit status 1, one ERROR line holding ``message``, no traceback, no page fetched."""
    assert done.returncode == 1, done.stderr[-3000:]
    errors = lines_at("ERROR", done.stderr)
    assert len(errors) == 1 and message in errors[0], done.stderr[-3000:]
    assert errors[0].endswith("; the crawl stops")
    assert "Traceback" not in done.stderr and not lines_at("CRITICAL", done.stderr), done.stderr[-3000:]
    assert f"'finish_reason': '{reason}'" in done.stderr
    assert "Crawled (" not in done.stderr


def test_a_finished_crawl_exits_with_status_0(project, local_site):
    done = scrapy_crawl(project, local_site.root, "-s", f"NEARDUP_STORE=leveldb://{project / 'store'}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "'neardup/dropped': 1" in done.stderr and not lines_at("ERROR", done.stderr)


@pytest.mark.parametrize(
    "option, message",
    [
        ("NEARDUP_SIMHASH_DISTANCE=40", "scrapy-neardup: NEARDUP_SIMHASH_DISTANCE: must be between 0 and 15, got 40"),
        ("NEARDUP_STORE=mysql://x", "scrapy-neardup: NEARDUP_STORE: unknown store 'mysql://x'"),
    ],
)
def test_a_bad_setting_is_one_line_and_exit_status_1(project, local_site, option, message):
    done = scrapy_crawl(project, local_site.root, "-s", option)
    assert_stopped_at_open(done, "neardup_bad_setting", message)


def test_a_bad_spider_argument_is_one_line_and_exit_status_1(project, local_site):
    done = scrapy_crawl(project, local_site.root, "-a", "neardup_action=delete")
    assert_stopped_at_open(
        done, "neardup_bad_setting", "NEARDUP_ACTION (spider argument neardup_action): must be one of"
    )


HOLDER = """
import sys, plyvel
db = plyvel.DB(sys.argv[1], create_if_missing=True)
print("holding", flush=True)
sys.stdin.read()
"""


def test_a_held_leveldb_store_exits_with_status_1(project, local_site):
    store = project / "store"
    holder = warm_python.popen(
        [sys.executable, "-c", HOLDER, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        done = scrapy_crawl(project, local_site.root, "-s", f"NEARDUP_STORE=leveldb://{store}")
    finally:
        holder.communicate("", timeout=10)
    assert_stopped_at_open(done, "neardup_store_unavailable", f"cannot open its store: LevelDB store {store} is held")


def test_a_refused_redis_connection_exits_with_status_1(project, local_site):
    port = free_port()  # nothing listens there
    done = scrapy_crawl(
        project,
        local_site.root,
        "-s",
        f"NEARDUP_STORE=redis://:s3cret@127.0.0.1:{port}/0",
        "-s",
        'NEARDUP_REDIS_PARAMS={"retries": 0}',
    )
    assert_stopped_at_open(done, "neardup_store_unavailable", f"127.0.0.1:{port}")
    assert "s3cret" not in done.stderr


def test_a_store_of_another_recipe_exits_with_status_1(project, local_site):
    store = f"NEARDUP_STORE=leveldb://{project / 'store'}"
    assert scrapy_crawl(project, local_site.root, "-s", store).returncode == 0
    done = scrapy_crawl(project, local_site.root, "-s", store, "-s", "NEARDUP_NSHASH_N=4")
    assert_stopped_at_open(done, "neardup_store_format", "nshash_n: stored 5, configured 4")


def test_misspelt_settings_and_spider_arguments_are_warned_with_the_closest_name(project, local_site):
    done = scrapy_crawl(
        project,
        local_site.root,
        "-s",
        "NEARDUP_STORE=memory://",
        "-s",
        "NEARDUP_ACTON=tag",
        "-a",
        "neardup_namespce=other",
        "-a",
        "neardup_action=tag",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    warnings = [line.split("] WARNING: ", 1)[1] for line in lines_at("WARNING", done.stderr)]
    assert "Unknown setting NEARDUP_ACTON (a typo of NEARDUP_ACTION?), ignored" in warnings
    assert "Unknown spider argument neardup_namespce (a typo of neardup_namespace?), ignored" in warnings
    assert "'neardup/tagged': 2" in done.stderr  # the right spelling still works


def test_ctrl_c_stops_a_crawl_and_its_worker_processes_quietly(project, local_site, tmp_path):
    """A terminal's Ctrl-C reaches the whole process group: each worker once printed a
    KeyboardInterrupt traceback and died, and the pages it held were retried one at a time."""
    env = child_env(project)
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    paths = ",".join(f"/{site}/{page}.html" for site in "abc" for page in ("metro", "canteen"))
    command = [sys.executable, "-m", "scrapy.cmdline", "crawl", "news", "-a", f"root={local_site.root}"]
    command += [
        "-a",
        f"paths={paths}",
        "-s",
        "NEARDUP_WORKERS=2",
        "-s",
        "DOWNLOAD_DELAY=1",
        "-s",
        "NEARDUP_STORE=memory://",
    ]
    log = tmp_path / "crawl.log"
    with open(log, "wb") as stderr:
        crawl = subprocess.Popen(command, cwd=project, env=env, stderr=stderr, start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline and "worker processes" not in log.read_text():  # the pipeline is open
            time.sleep(0.1)
        time.sleep(1)  # a page or two crawled, 1 s apart
        os.killpg(crawl.pid, signal.SIGINT)
        assert crawl.wait(timeout=120) == 0
    said = log.read_text()
    assert "Received SIGINT, shutting down gracefully" in said and "'finish_reason': 'shutdown'" in said
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said[-3000:]
    assert "worker process died" not in said
