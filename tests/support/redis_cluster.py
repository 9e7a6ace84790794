"""Pytest fixtures that run a real Redis Cluster on 127.0.0.1: three masters with a replica each,
made by ``redis-server --cluster-enabled yes`` and ``redis-cli --cluster create``, as a user
would make one. Skipped (failed under ``NEARDUP_REQUIRE_REDIS=1``) when the binaries are missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from support.redis_server import _binary, free_port

MASTERS = 3
NODE_TIMEOUT_MS = 1000  # a master silent this long is failed over to its replica
# The session's cluster is never failed over (a test that kills or flushes a master starts a
# cluster of its own), so it need not check its peers ten times a second while it waits for
# tests: idle, its six nodes take a sixth of the CPU (benchmarks/README.md, the test suite).
UNWATCHED = {"hz": "1", "cluster-node-timeout": "5000"}


def _free_cluster_port(taken: set[int]) -> int:
    """A free port whose cluster bus port (port + 10000) is free too, and neither is a port of
    ``taken``: a node just started may not listen yet, so its port still looks free."""
    used = {port for node in taken for port in (node, node + 10000)}
    for _ in range(50):
        port = free_port()
        if port + 10000 < 65536 and port not in used and port + 10000 not in used:
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port
    raise RuntimeError("no free port pair for a cluster node")


@dataclass
class ClusterNode:
    port: int
    workdir: str
    args: list[str]
    process: subprocess.Popen | None = None
    password: str | None = None
    kept: Any = field(default=None, repr=False)  # the client of kept_client, while the node lives

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, password=self.password)

    def kept_client(self):
        """A client kept open while the node lives: the fixtures look at every node before
        each test, and a new client a look (its connection, its handshake) cost more than
        the look itself."""
        if self.kept is None:
            self.kept = self.client()
        return self.kept

    def start(self) -> None:
        self.forget_client()
        self.process = subprocess.Popen(self.args, cwd=self.workdir)

    def forget_client(self) -> None:
        if self.kept is not None:
            self.kept.close()
            self.kept = None

    def kill(self) -> None:
        """Kill the node as a crash would (SIGKILL)."""
        self.forget_client()
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith((b"+PONG", b"-NOAUTH"))  # up, with a password or not
        except OSError:
            return False


@dataclass
class RedisClusterGroup:
    """Six nodes of one cluster; ``url()`` gives a ``redis+cluster://`` store URI naming one."""

    nodes: list[ClusterNode] = field(default_factory=list)
    workdir: str = ""
    password: str | None = None  # every node's (requirepass and masterauth)

    def url(self, *nodes: int, query: str = "") -> str:
        named = nodes or (0,)
        hosts = ",".join(f"127.0.0.1:{self.nodes[n].port}" for n in named)
        return f"redis+cluster://{hosts}/" + (f"?{query}" if query else "")

    def client(self):
        from redis.cluster import ClusterNode as Startup
        from redis.cluster import RedisCluster

        return RedisCluster(
            startup_nodes=[Startup("127.0.0.1", node.port) for node in self.nodes if node.answers()],
            password=self.password,
        )

    def masters(self) -> list[ClusterNode]:
        """The nodes that are masters now, by the cluster's own account."""
        found = []
        for node in self.nodes:
            if node.answers() and node.kept_client().info("replication").get("role") == "master":
                found.append(node)
        return found

    def flush(self) -> None:
        for node in self.masters():
            node.kept_client().flushall()

    def wait_ok(self, timeout: float = 30) -> None:
        """Wait until every live node says the cluster is ok, every replica is in sync, and
        every live node's slot map names every live node: a client discovers the nodes from
        that map, and a replica not yet gossiped about is missing from it."""
        deadline = time.monotonic() + timeout
        while True:
            states = []
            live = {node.port for node in self.nodes if node.answers()}
            for node in self.nodes:
                if node.port not in live:
                    continue
                client = node.kept_client()
                info = client.cluster("info")
                ok = info.get("cluster_state") == "ok"
                replication = client.info("replication")
                if replication.get("role") == "slave":
                    ok = ok and replication.get("master_link_status") == "up"
                mapped = {entry[1] for row in client.execute_command("CLUSTER", "SLOTS") for entry in row[2:]}
                states.append(ok and mapped == live)
            if states and all(states):
                return
            assert time.monotonic() < deadline, "the Redis Cluster did not become ok"
            time.sleep(0.1)

    def watch_less(self) -> None:
        """Set :data:`UNWATCHED` on every node: for a cluster no test fails over."""
        for node in self.nodes:
            with node.client() as client:
                for name, value in UNWATCHED.items():
                    client.config_set(name, value)

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def start_cluster(*extra: str, password: str | None = None) -> RedisClusterGroup:
    """Start three masters and three replicas (appendonly, so a restart keeps their data) and
    join them with ``redis-cli --cluster create``; ``extra`` are more redis-server options,
    ``password`` every node's (requirepass, and masterauth for the replicas)."""
    server = _binary("redis-server", "the Redis Cluster tests need a real cluster")
    cli = _binary("redis-cli", "the Redis Cluster tests create the cluster with redis-cli --cluster create")
    group = RedisClusterGroup(workdir=tempfile.mkdtemp(prefix="neardup-cluster-"), password=password)
    secured = ["--requirepass", password, "--masterauth", password] if password else []
    try:
        for _ in range(2 * MASTERS):
            port = _free_cluster_port({node.port for node in group.nodes})
            workdir = os.path.join(group.workdir, str(port))
            os.makedirs(workdir)
            args = [
                server,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                str(NODE_TIMEOUT_MS),
                # A replica is in the slot map (CLUSTER SLOTS) once its replication offset is not
                # 0: a new master with no writes moves it with a PING to its replicas every
                # 10 s by default, so a new cluster was complete only after 10 s.
                "--repl-ping-replica-period",
                "1",
                # A master sends its first copy to a replica at once (Redis waits 5 s by default,
                # for more replicas to share the transfer), as in a Sentinel group (redis_server.py).
                "--repl-diskless-sync-delay",
                "0",
                "--appendonly",
                "yes",
                "--save",
                "",
                "--dir",
                workdir,
                "--logfile",
                "redis.log",
                "--daemonize",
                "no",
                *secured,
                *extra,
            ]
            node = ClusterNode(port, workdir, args, password=password)
            node.start()
            group.nodes.append(node)
        deadline = time.monotonic() + 10
        while not all(node.answers() for node in group.nodes):
            assert time.monotonic() < deadline, "a cluster node did not start"
            time.sleep(0.05)
        hosts = [f"127.0.0.1:{node.port}" for node in group.nodes]
        created = subprocess.run(
            [cli, "--cluster", "create", *hosts, "--cluster-replicas", "1", "--cluster-yes"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "REDISCLI_AUTH": password} if password else None,
        )
        assert created.returncode == 0, created.stdout + created.stderr
        group.wait_ok()
    except BaseException:
        group.stop()
        raise
    return group


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisClusterGroup]:
    group = start_cluster()
    group.watch_less()
    yield group
    group.stop()


@pytest.fixture
def cluster_url(redis_cluster: RedisClusterGroup) -> Iterator[str]:
    """A store URI on an empty cluster (every master flushed before the test)."""
    redis_cluster.wait_ok()
    redis_cluster.flush()
    yield redis_cluster.url(0)
