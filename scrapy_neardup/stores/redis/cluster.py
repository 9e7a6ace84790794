"""``redis+cluster://``: a Redis Cluster, found from any of its nodes.

``redis+cluster://[[user]:password@]host:port[,host:port...]/[?shards=N&slots=M]`` names one or more
nodes of the cluster (port 6379 when left out); the client asks them for the others and for the
master serving each hash slot, so any reachable nodes will do. ``rediss+cluster://`` talks TLS.
The password, percent-encoded like any store URI's, is the nodes'. ``shards`` and ``slots`` are
read by the store when it creates a namespace (see ``cluster_store.py``); nothing else goes in
the query: client options go in ``NEARDUP_REDIS_PARAMS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException

from .sentinel import parse_hosts

__all__ = ["SCHEME", "ClusterTarget", "cluster_client", "is_cluster", "parse_cluster_uri"]

SCHEME = "redis+cluster"
TLS_SCHEME = "rediss+cluster"
PORT = 6379


@dataclass(frozen=True)
class ClusterTarget:
    """What a ``redis+cluster://`` URI names."""

    nodes: tuple[tuple[str, int], ...]
    username: str | None = None
    password: str | None = None
    tls: bool = False
    shards: int | None = None  # bucket hashes per time window of a namespace it creates
    slots: int | None = None  # hash slots a namespace it creates spreads over

    def address(self) -> str:
        """The nodes named, for messages."""
        return "cluster nodes " + ",".join(f"{host}:{port}" for host, port in self.nodes)


def is_cluster(uri: str) -> bool:
    return uri.lower().startswith((SCHEME + "://", TLS_SCHEME + "://"))


def parse_cluster_uri(uri: str) -> ClusterTarget:
    """The nodes, credentials and options of ``uri``; ValueError saying what is wrong."""
    scheme, _, rest = uri.partition("://")
    rest, _, query = rest.partition("?")
    if "#" in rest + query:
        raise ValueError("a redis+cluster:// URI takes no fragment ('#' in a password is written %23)")
    netloc, _, path = rest.partition("/")
    if path.strip("/") not in ("", "0"):
        raise ValueError(f"a cluster has one database, 0: the path must be '/' or '/0', not '/{path}'")
    username, password, nodes = parse_hosts(netloc, PORT, "cluster node")
    layout: dict[str, int] = {}
    for param in filter(None, query.split("&")):
        name, _, value = param.partition("=")
        if name not in ("shards", "slots"):
            raise ValueError(
                f"a redis+cluster:// URI takes only shards and slots in its query, not {unquote(name)!r}: "
                "client options go in NEARDUP_REDIS_PARAMS"
            )
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"{name} must be a positive whole number, got {unquote(value)!r}")
        layout[name] = int(value)
    tls = scheme.lower() == TLS_SCHEME
    return ClusterTarget(tuple(nodes), username, password, tls, layout.get("shards"), layout.get("slots"))


def cluster_client(uri: str, params: dict[str, Any]) -> RedisCluster:
    """A cluster client that starts from ``uri``'s nodes, with the connection options
    ``params`` (those of a ``redis://`` client; ``retry`` sets the cluster client's retries)."""
    target = parse_cluster_uri(uri)
    options = {
        name: value
        for name, value in params.items()
        if name not in ("single_connection_client", "retry_on_error", "retry_on_timeout")
    }
    if target.password is not None:
        options.setdefault("password", target.password)
    if target.username is not None:
        options.setdefault("username", target.username)
    if target.tls:
        options.setdefault("ssl", True)
    options.setdefault("protocol", 2)  # the store reads replies as RESP2 gives them
    try:
        return RedisCluster(startup_nodes=[ClusterNode(host, port) for host, port in target.nodes], **options)
    except RedisClusterException as exc:  # no node answered: an unreachable store, as for redis://
        raise RedisConnectionError(str(exc)) from exc.__cause__ or exc.__context__
