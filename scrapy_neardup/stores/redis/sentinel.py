"""``redis+sentinel://``: the primary of a Redis group watched by Sentinel, followed across failovers.

``redis+sentinel://[[user]:password@]host:port[,host:port...]/service_name[/db][?sentinel_password=...]``
names the sentinels to ask (port 26379 when left out) and the service they watch. The password,
percent-encoded like any store URI's, is the primary's (and its replicas'); ``sentinel_password``
is the sentinels' own. Other options of the sentinels go in
``NEARDUP_REDIS_PARAMS["sentinel_kwargs"]``.

The client asks a sentinel for the primary's address each time it connects, so after a failover
its next connection goes to the promoted replica. Until Sentinel has promoted one, calls fail
as for any Redis that is down: the client retries, then the pipeline's items wait for the store
(``NEARDUP_STORE_DOWN_TIMEOUT``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.sentinel import Sentinel, SentinelConnectionPool, SentinelManagedConnection

__all__ = ["SCHEME", "SentinelTarget", "is_sentinel", "parse_hosts", "parse_sentinel_uri", "sentinel_client"]

SCHEME = "redis+sentinel"
SENTINEL_PORT = 26379


@dataclass(frozen=True)
class SentinelTarget:
    """What a ``redis+sentinel://`` URI names."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None

    def address(self) -> str:
        """The sentinels and the service, for messages."""
        hosts = ",".join(f"{host}:{port}" for host, port in self.sentinels)
        return f"sentinels {hosts} (service {self.service!r})"


def is_sentinel(uri: str) -> bool:
    return uri.lower().startswith(SCHEME + "://")


def parse_sentinel_uri(uri: str) -> SentinelTarget:
    """The sentinels, service, db and credentials of ``uri``; ValueError saying what is wrong."""
    rest, _, query = uri.split("://", 1)[1].partition("?")
    if "#" in rest + query:
        raise ValueError("a redis+sentinel:// URI takes no fragment ('#' in a password is written %23)")
    sentinel_password = None
    for param in filter(None, query.split("&")):
        name, _, value = param.partition("=")
        if name != "sentinel_password":
            raise ValueError(
                f"a redis+sentinel:// URI takes only sentinel_password in its query, not {name!r}: "
                "client options go in NEARDUP_REDIS_PARAMS"
            )
        sentinel_password = unquote(value)
    netloc, _, path = rest.partition("/")
    username, password, sentinels = parse_hosts(netloc, SENTINEL_PORT, "sentinel")
    service, _, db = path.strip("/").partition("/")
    if not service:
        raise ValueError("names no service: write the service name the sentinels watch after the hosts (/mymaster)")
    if db and not db.isdigit():
        raise ValueError(f"db {db!r} is not a number (the path is /service_name[/db])")
    return SentinelTarget(tuple(sentinels), unquote(service), int(db or 0), username, password, sentinel_password)


def parse_hosts(netloc: str, default_port: int, noun: str) -> tuple[str | None, str | None, list[tuple[str, int]]]:
    """The user, password (percent-decoded) and ``(host, port)`` list of a URI's
    ``[[user]:password@]host:port[,host:port...]`` part; ``noun`` names the hosts in errors."""
    userinfo, at, hosts = netloc.rpartition("@")
    username = password = None
    if at:
        user, colon, secret = userinfo.partition(":")
        username, password = (unquote(user) or None, unquote(secret)) if colon else (None, unquote(user))
    found = []
    for part in hosts.split(","):
        host, port = part, ""
        if part.startswith("["):  # IPv6: [::1]:26379
            host, _, tail = part[1:].partition("]")
            port = tail.removeprefix(":")
        elif ":" in part:
            host, _, port = part.rpartition(":")
        if not host:
            raise ValueError(f"names no {noun}: write host:port[,host:port...] after '//'")
        if port and not port.isdigit():
            raise ValueError(f"{noun} port {port!r} is not a number")
        found.append((host, int(port) if port else default_port))
    return username, password, found


class PrimaryConnection(SentinelManagedConnection):
    """A connection that asks the sentinels for the primary's address before each socket it
    opens. redis-py's own asks only when ``connect()`` is called, but redis-py 8 reconnects a
    dropped connection through another path, which went back to the dead primary for good."""

    def _connect(self) -> Any:
        self.host, self.port = self.connection_pool.get_master_address()
        return super()._connect()


def sentinel_client(uri: str, params: dict[str, Any]) -> redis.Redis:
    """A client of the primary that ``uri``'s sentinels name, with the connection options
    ``params`` (those of a ``redis://`` client, plus ``sentinel_kwargs`` for the sentinels)."""
    target = parse_sentinel_uri(uri)
    options = dict(params)
    single = options.pop("single_connection_client", False)
    sentinel_kwargs = options.pop("sentinel_kwargs", None)
    if sentinel_kwargs is None:  # the sentinels answer within the same timeouts
        sentinel_kwargs = {name: value for name, value in options.items() if name.startswith("socket_")}
    if target.sentinel_password is not None:
        sentinel_kwargs = {"password": target.sentinel_password, **sentinel_kwargs}
    # A sentinel that does not answer is passed over for the next: the store's own retries
    # ask them all again, so one sentinel asked again only waits.
    sentinel_kwargs = {"retry": Retry(NoBackoff(), 0), **sentinel_kwargs}
    sentinel = Sentinel(list(target.sentinels), sentinel_kwargs=sentinel_kwargs)
    if target.password is not None:
        options.setdefault("password", target.password)
    if target.username is not None:
        options.setdefault("username", target.username)
    pool = SentinelConnectionPool(
        target.service, sentinel, is_master=True, db=target.db, connection_class=PrimaryConnection, **options
    )
    client = redis.Redis(connection_pool=pool, single_connection_client=single)
    client.auto_close_connection_pool = True  # close() disconnects the pool made here
    return client
