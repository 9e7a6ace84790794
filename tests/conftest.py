import os
import sys
import uuid
from collections.abc import Iterator

import pytest
from support.folders import read_only_folder  # noqa: F401
from support.local_site import LocalSite
from support.processes import stop_server
from support.redis_cluster import cluster_url, redis_cluster  # noqa: F401
from support.redis_server import redis_server, redis_url  # noqa: F401

# Bytecode is cached for this process and the many it starts (pytest's workers, crawls, their
# worker processes, the CLI): where the environment sets PYTHONDONTWRITEBYTECODE, each of them
# would compile the package again from source.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# The modules that hold the longest tests (whole crawls, each in processes of their own; a cold
# build of the tables), longest first (benchmarks/suite.py --durations). A module moved or
# renamed here only loses its place in the order, never a test.
SLOW_FIRST = [
    "crawl/test_distributed_crawl.py",
    "fingerprints/test_prepared.py",
    "crawl/test_first_hour_crawl.py",
    "crawl/test_example_project.py",
    "cli/test_cli.py",
    "crawl/test_crawl_failures.py",
    "crawl/test_redis_crawl.py",
    "crawl/test_crawl.py",
    "stores/test_redis_faults.py",
    "stores/test_redis_cluster.py",
    "serve/test_serve.py",
    "cli/test_first_hour_cli.py",
]


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: two workers more than the cores. Many tests wait on a child process (a
    crawl, a server, a browser) for much of their time; with one worker a core those waits
    leave a core idle."""
    return (os.cpu_count() or 1) + 2


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The server of the forked processes (support.processes) stops and is waited for, so its
    CPU counts in this process's children, as a child process's does."""
    stop_server()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules of SLOW_FIRST run first, the rest in their usual order. With ``--dist load
    --maxschedchunk 1`` (a test at a time to the worker that is free) the long tests start at
    once, one a worker, and the run ends on short ones instead of waiting on one long crawl."""
    rank = {name: place for place, name in enumerate(SLOW_FIRST)}

    def place(item: pytest.Item) -> int:
        return rank.get("/".join(item.path.parts[-2:]), len(rank))

    items.sort(key=place)


@pytest.fixture(scope="session")
def local_site() -> Iterator[LocalSite]:
    """The small news world served on 127.0.0.1 (support.local_site.LocalSite)."""
    with LocalSite() as site:
        yield site


@pytest.fixture(autouse=True)
def receipts_of_this_test(tmp_path_factory, monkeypatch):
    """Each test keeps its stores' receipts (stores/receipts.py) in a folder of its own, never
    in the user's: a store one test made is not reported lost by another. The folder is made
    by the first receipt written: most tests write none, and every folder a run leaves is
    removed one by one by a later run (pytest keeps the last three runs' folders)."""
    folder = tmp_path_factory.getbasetemp() / "state" / uuid.uuid4().hex
    monkeypatch.setenv("NEARDUP_STATE_DIR", str(folder))


@pytest.fixture(params=["memory", "leveldb", "redis", "cluster"])
def store_uri(request, tmp_path):
    """One URI of each backend, empty: the store contract tests run on all four (Redis Cluster:
    three masters with a replica each).

    The memory store is a named one, so that closing and opening it again finds its
    documents, as the others do.
    """
    if request.param == "memory":
        return f"memory://{uuid.uuid4().hex}"
    if request.param == "leveldb":
        return f"leveldb://{tmp_path}/store"
    if request.param == "cluster":
        return request.getfixturevalue("cluster_url")
    return request.getfixturevalue("redis_url")
