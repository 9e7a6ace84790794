"""Pytest fixtures that run a real ``redis-server`` on a free 127.0.0.1 port.

Skipped with a clear reason when the binary is missing, unless ``NEARDUP_REQUIRE_REDIS=1``
(CI sets it), which turns the skip into a failure so CI cannot skip the Redis tests silently.
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
from urllib.parse import quote

import pytest

REQUIRE_ENV = "NEARDUP_REQUIRE_REDIS"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ping(port: int, password: str | None) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            if password:
                secret = password.encode()
                sock.sendall(b"*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n" % (len(secret), secret))
                if not sock.recv(64).startswith(b"+OK"):
                    return False
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@dataclass
class RedisServer:
    """One redis-server process; ``url(db)`` gives a store URI for it."""

    port: int
    password: str | None = None
    process: subprocess.Popen | None = None
    workdir: str = ""
    log: str = ""
    args: list[str] = field(default_factory=list)
    socket: str = ""  # its Unix socket, when started with one

    def url(self, db: int = 0, scheme: str = "redis") -> str:
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        return f"{scheme}://{auth}127.0.0.1:{self.port}/{db}"

    def client(self, db: int = 0):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, db=db, password=self.password)

    def wait_for_documents(self, count: int, namespace: str = "default", timeout: float = 30) -> None:
        """Wait until the store's namespace holds ``count`` documents (or ``timeout`` passes)."""
        client = self.client()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and client.zcard(f"neardup:{{{namespace}}}:t") < count:
            time.sleep(0.02)
        client.close()

    def restart(self) -> None:
        """Kill the server, as a crash would, and start it again with the same options."""
        self.kill()
        self.start()

    def kill(self) -> None:
        """Kill the server as a crash would (SIGKILL); its files stay for :meth:`start`."""
        self.process.kill()
        self.process.wait(10)

    def start(self) -> None:
        """Start the killed server again with the same options and wait until it answers."""
        self.process = subprocess.Popen(self.args)
        deadline = time.monotonic() + 10
        while not _ping(self.port, self.password):
            assert time.monotonic() < deadline and self.process.poll() is None, "redis-server did not restart"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def redis_binary() -> str:
    """The redis-server path, or skip (fail when NEARDUP_REQUIRE_REDIS=1)."""
    return _binary("redis-server", "the Redis store tests need a real server")


def _binary(name: str, need: str) -> str:
    binary = shutil.which(name)
    if binary is None:
        reason = f"{name} is not installed (apt-get install {name}); {need}"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{reason}, and {REQUIRE_ENV}=1 requires them to run", pytrace=False)
        pytest.skip(reason)
    return binary


def start_redis(
    *extra: str, password: str | None = None, unix_socket: bool = False, persistent: bool = True, attempts: int = 3
) -> RedisServer:
    """Start a redis-server and wait until it answers PING.

    ``extra`` are more redis-server options; ``unix_socket`` makes it listen on one too.
    ``persistent``: one save point (``save 3600 1``), so the store opens it as a server that
    keeps its data (no test runs long enough to write the snapshot, and a kill loses what was
    not saved, as on any such server); False: ``save ''`` and ``appendonly no``, a server the
    store refuses unless allowed (NEARDUP_REDIS_ALLOW_NO_PERSISTENCE).
    """
    binary = redis_binary()
    last_log = ""
    for _ in range(attempts):
        port = free_port()
        workdir = tempfile.mkdtemp(prefix="neardup-redis-")
        log = os.path.join(workdir, "redis.log")
        args = [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "3600 1" if persistent else "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
            "--logfile",
            log,
            "--daemonize",
            "no",
        ]
        if password:
            args += ["--requirepass", password]
        socket_path = os.path.join(workdir, "redis.sock") if unix_socket else ""
        if socket_path:
            args += ["--unixsocket", socket_path, "--unixsocketperm", "700"]
        args += list(extra)
        server = RedisServer(port, password, subprocess.Popen(args), workdir, log, args, socket_path)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and server.process.poll() is None:
            if _ping(port, password):
                return server
            time.sleep(0.05)
        if os.path.exists(log):
            with open(log, encoding="utf-8", errors="replace") as handle:
                last_log = handle.read()[-2000:]
        server.stop()  # the port was taken meanwhile, or the server failed: try another
    raise RuntimeError(f"redis-server did not start after {attempts} attempts; its log:\n{last_log}")


def sentinel_binary() -> str:
    """The redis-sentinel path, or skip (fail when NEARDUP_REQUIRE_REDIS=1)."""
    return _binary("redis-sentinel", "the failover tests need real sentinels")


@dataclass
class SentinelGroup:
    """A primary, its replica, and one sentinel watching them as ``service``; ``url(db)``
    gives a ``redis+sentinel://`` store URI for them."""

    primary: RedisServer
    replica: RedisServer
    port: int
    process: subprocess.Popen
    workdir: str
    sentinel_password: str | None = None
    service: str = "neardup"

    def url(self, db: int = 0) -> str:
        password = self.primary.password
        auth = f":{quote(password, safe='')}@" if password else ""
        return f"redis+sentinel://{auth}127.0.0.1:{self.port}/{self.service}/{db}"

    def sentinel_client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, password=self.sentinel_password)

    def primary_port(self) -> int:
        """The port of the server the sentinel names as the primary now."""
        with self.sentinel_client() as sentinel:
            return int(sentinel.sentinel_get_master_addr_by_name(self.service)[1])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.primary.stop()
        self.replica.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _until(condition, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.05)


def start_sentinel_group(
    password: str | None = None,
    sentinel_password: str | None = None,
    down_after_ms: int = 500,
    failover_timeout_ms: int = 2000,
) -> SentinelGroup:
    """Start a primary, a replica of it and a sentinel that promotes the replica
    ``down_after_ms`` after the primary stops answering; return once the sentinel knows both.
    ``password`` is the servers', ``sentinel_password`` the sentinel's own."""
    import redis

    binary = sentinel_binary()
    # A primary sends its first copy to a replica at once (Redis waits 5 s by default, for more
    # replicas to share the transfer); either server may become the primary.
    auth = ["--repl-diskless-sync-delay", "0"] + (["--masterauth", password] if password else [])
    primary = start_redis(*auth, password=password)
    replica = start_redis("--replicaof", "127.0.0.1", str(primary.port), *auth, password=password)
    try:
        # A sentinel learns of replicas from the primary's INFO, which it asks for at once and
        # then every 10 s: started once the replica is in sync, it knows the replica at once.
        with replica.client() as replica_client:
            _until(
                lambda: replica_client.info("replication").get("master_link_status") == "up",
                "the replica did not sync",
            )
    except BaseException:
        primary.stop()
        replica.stop()
        raise
    port, workdir = free_port(), tempfile.mkdtemp(prefix="neardup-sentinel-")
    config = os.path.join(workdir, "sentinel.conf")
    lines = [
        f"port {port}",
        "bind 127.0.0.1",
        f"dir {workdir}",
        f"logfile {os.path.join(workdir, 'sentinel.log')}",
        f"sentinel monitor neardup 127.0.0.1 {primary.port} 1",
        f"sentinel down-after-milliseconds neardup {down_after_ms}",
        f"sentinel failover-timeout neardup {failover_timeout_ms}",
    ]
    if password:
        lines.append(f'sentinel auth-pass neardup "{password}"')
    if sentinel_password:
        lines.append(f'requirepass "{sentinel_password}"')
    with open(config, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    group = SentinelGroup(primary, replica, port, subprocess.Popen([binary, config]), workdir, sentinel_password)
    try:
        sentinel = group.sentinel_client()

        def knows_the_replica() -> bool:
            try:
                found = sentinel.sentinel_slaves("neardup")
            except redis.RedisError:
                return False
            return any(int(r["port"]) == replica.port and "s_down" not in r["flags"] for r in found)

        _until(knows_the_replica, "the sentinel did not find the replica")
        sentinel.close()
    except BaseException:
        group.stop()
        raise
    return group


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = start_redis()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """A store URI on an empty server (every db flushed before the test)."""
    client = redis_server.client()
    client.flushall()
    client.close()
    yield redis_server.url(0)
