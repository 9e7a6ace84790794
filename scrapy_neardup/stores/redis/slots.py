"""Commands for a Redis Cluster, each sent to the master serving its hash slot.

A list of commands goes out as one pipeline per master, to every master before any reply is
read, so a list costs one round trip whatever its spread. Each master gets one connection,
kept: ``WAIT`` on it then covers every write sent to that master. Redirections are followed
(MOVED: the slot map is corrected; ASK: the command goes to the importing master after
ASKING; TRYAGAIN and CLUSTERDOWN: sent again a moment later), and a master that stops
answering is waited for while the cluster promotes one of its replicas, for at most
``failover_wait`` seconds, after which its commands go to the new master. A refused command
goes again with every later one sent to that master, in order. A command may therefore run
twice; the store sends only commands for which that is harmless.
"""

from __future__ import annotations

import hashlib
import importlib
import time
from typing import Any

from redis._parsers.base import BaseParser
from redis.cluster import RedisCluster
from redis.exceptions import (
    AskError,
    BusyLoadingError,
    ClusterDownError,
    MovedError,
    NoScriptError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

hiredis: Any
try:  # replies parsed in C, many at a time (redis[hiredis], the redis extra)
    hiredis = importlib.import_module("hiredis")
except ImportError:  # pragma: no cover - the pure-Python parser of redis-py instead
    hiredis = None

__all__ = ["Call", "SlotRouter"]

# (slot, command words); a node name ("host:port") instead of a slot sends the command to
# that master only, never elsewhere (WAIT).
Call = tuple[int | str, tuple]

_DOWN = (RedisConnectionError, RedisTimeoutError, OSError)
_LATER = (TryAgainError, ClusterDownError, BusyLoadingError)  # the cluster is moving: try again


_PACKED: dict[Any, bytes] = {}  # words that recur (commands, script hashes, slot markers) as packed


def _pack(words: tuple) -> bytes:
    """One command in the Redis protocol (redis-py's packer is general, and slow for many
    small commands)."""
    parts = [b"*%d\r\n" % len(words)]
    for word in words:
        packed = _PACKED.get(word) if type(word) is not bytes or len(word) < 64 else None
        if packed is None:
            raw = word
            kind = type(word)
            if kind is str:
                word = word.encode("utf-8")
            elif kind is int:
                word = b"%d" % word
            elif kind is float:
                word = repr(word).encode("ascii")
            packed = b"$%d\r\n%s\r\n" % (len(word), word)
            if kind is not bytes and len(_PACKED) < 100_000:
                _PACKED[raw] = packed
        parts.append(packed)
    return b"".join(parts)


def remember(word: bytes) -> None:
    """Keep ``word`` packed: it recurs in many commands."""
    if len(_PACKED) < 100_000:
        _PACKED[word] = b"$%d\r\n%s\r\n" % (len(word), word)


class SlotRouter:
    def __init__(self, cluster: RedisCluster, failover_wait: float = 15.0):
        self.cluster = cluster
        self.failover_wait = failover_wait
        self._connections: dict[str, Any] = {}  # master name -> its connection
        self._scripts: dict[str, bytes] = {}  # sha1 -> source, to load where a master lacks it
        self.failed_slots: set[int] = set()  # slots of masters that failed since it was cleared
        self.used: set[str] = set()  # masters sent commands since it was cleared
        self._owners: list[str] | None = None  # slot -> master name, from the slot map

    def script(self, source: str) -> str:
        """The SHA1 to call ``source`` by (EVALSHA); loaded on a master when it lacks it."""
        sha = hashlib.sha1(source.encode("utf-8")).hexdigest()
        self._scripts[sha] = source.encode("utf-8")
        return sha

    def run(self, calls: list[Call]) -> list[Any]:
        """Each call's reply, in order; a command the server refused gives its error as the
        reply (the caller raises it). Raises the connection error when a master is still
        unreachable after ``failover_wait`` seconds."""
        replies: list[Any] = [None] * len(calls)
        todo = list(range(len(calls)))
        asking: dict[int, str] = {}  # call -> the master to ask (ASK redirection)
        since = None  # when the first failure of this run was met
        while todo:
            retry: list[int] = []
            down: BaseException | None = None
            groups: dict[str, list[int]] = {}
            for index in todo:
                target = calls[index][0]
                try:
                    name = asking.get(index) or (target if isinstance(target, str) else self.master_of(target))
                except RedisClusterException as exc:  # the slot map has a hole: refresh it
                    down = RedisConnectionError(str(exc))
                    retry.append(index)
                    continue
                groups.setdefault(name, []).append(index)
            sent = []
            for name, indexes in groups.items():
                commands = []
                for index in indexes:
                    if index in asking:
                        commands.append(("ASKING",))
                    commands.append(calls[index][1])
                try:
                    connection = self._connection(name)
                    data = b"".join(map(_pack, commands))
                    if hiredis is not None:
                        connection._sock.sendall(data)
                    else:
                        connection.send_packed_command([data], check_health=False)
                    sent.append((name, connection, indexes))
                    if any(not isinstance(calls[index][0], str) for index in indexes):
                        self.used.add(name)
                except _DOWN as exc:
                    down = exc
                    self._failed(name, calls, indexes, retry, replies)
            for name, connection, indexes in sent:
                try:
                    answers = iter(self._read(connection, len(indexes) + sum(index in asking for index in indexes)))
                    for index in indexes:
                        if index in asking:
                            next(answers)  # ASKING's OK
                        replies[index] = next(answers)
                except _DOWN as exc:
                    down = exc
                    self._failed(name, calls, indexes, retry, replies)
                    continue
                loaded: set[str] = set()
                # A master that refused a call (a promoted replica without the script, a slot
                # moved or being moved, the cluster down a moment) may have run calls after it
                # (the slot's state changed between them, or their keys differed): that one and
                # every later one go again, in order (each is safe to repeat), or writes sent
                # again would land out of order (a record written undecided after it was kept).
                refused = False
                for index in indexes:
                    reply = replies[index]
                    if asking:
                        asking.pop(index, None)
                    if isinstance(reply, NoScriptError):
                        if calls[index][1][1] not in loaded:
                            loaded.add(calls[index][1][1])
                            self._load(connection, calls[index][1])
                    elif isinstance(reply, MovedError):
                        self.cluster.nodes_manager.move_slot(reply)
                        self._owners = None
                    elif isinstance(reply, AskError):
                        asking[index] = f"{reply.host}:{reply.port}"
                    elif isinstance(reply, _LATER):
                        down = down or reply
                    elif not refused:
                        continue
                    refused = True
                    retry.append(index)
            todo = sorted(retry)
            if todo and down is not None:
                since = since or time.monotonic()
                if time.monotonic() - since > self.failover_wait:
                    if isinstance(down, RedisError):
                        raise down
                    raise RedisConnectionError(f"{down.__class__.__name__}: {down}") from down
                time.sleep(min(0.5, 0.05 + (time.monotonic() - since) / 10))
                self._refresh()
        return replies

    def wait_replicas(self, timeout_ms: int) -> dict[str, int]:
        """``WAIT 1`` on every master sent commands since :attr:`used` was cleared that has a
        replica: how many replicas acknowledged each one's writes. A master that fails
        meanwhile is left out (its slots go to :attr:`failed_slots`)."""
        names = sorted(name for name in self.used if self._replicas(name))
        self.used = set()
        if not names:
            return {}
        replies = self.run([(name, ("WAIT", 1, timeout_ms)) for name in names])
        return {name: reply for name, reply in zip(names, replies) if isinstance(reply, int)}

    def slots_of(self, name: str) -> set[int]:
        """The slots the slot map gives master ``name`` now."""
        cache = self.cluster.nodes_manager.slots_cache
        return {slot for slot, nodes in cache.items() if nodes and nodes[0].name == name}

    def close(self) -> None:
        for connection in self._connections.values():
            connection.disconnect()
        self._connections = {}

    def reset(self) -> None:
        """Forget the connections (a forked child opens its own)."""
        self.close()

    # -- internals ----------------------------------------------------------------------

    def master_of(self, slot: int) -> str:
        owners = self._owners
        if owners is None:
            cache = self.cluster.nodes_manager.slots_cache
            owners = self._owners = [cache[s][0].name if cache.get(s) else "" for s in range(16384)]
        if not owners[slot]:
            self._owners = None
            return self.cluster.nodes_manager.get_node_from_slot(slot).name  # raises: not covered
        return owners[slot]

    def _replicas(self, name: str) -> int:
        for nodes in self.cluster.nodes_manager.slots_cache.values():
            if nodes and nodes[0].name == name:
                return len(nodes) - 1
        return 0

    def _connection(self, name: str) -> Any:
        connection = self._connections.get(name)
        if connection is None:
            host, _, port = name.rpartition(":")
            node = self.cluster.get_node(host=host, port=int(port))
            if node is None:
                node = self.cluster.nodes_manager._get_or_create_cluster_node(host, int(port), "primary", {})
                self.cluster.nodes_manager.nodes_cache[node.name] = node
            connection = self.cluster.get_redis_connection(node).connection_pool.get_connection()
            self._connections[name] = connection
        return connection

    def _failed(self, name: str, calls: list[Call], indexes: list[int], retry: list[int], replies: list[Any]) -> None:
        """Master ``name`` did not answer: its connection goes, its slots are noted (writes
        sent there may be lost if a replica is promoted), its calls are sent again (a call
        aimed at it alone gets the error instead)."""
        connection = self._connections.pop(name, None)
        if connection is not None:
            connection.disconnect()
        self.failed_slots |= self.slots_of(name)
        for index in indexes:
            if isinstance(calls[index][0], str):
                replies[index] = RedisConnectionError(f"master {name} did not answer")
            else:
                retry.append(index)

    def _read(self, connection: Any, count: int) -> list[Any]:
        """The next ``count`` replies on ``connection``; an error reply as its exception."""
        out: list[Any] = []
        if hiredis is None:
            for _ in range(count):
                try:
                    out.append(connection.read_response())
                except ResponseError as exc:
                    out.append(exc)
            return out
        reader = connection.__dict__.get("_neardup_reader")
        if reader is None:
            reader = connection._neardup_reader = hiredis.Reader()
        while len(out) < count:
            reply = reader.gets()
            if reply is False:
                data = connection._sock.recv(1 << 16)
                if not data:
                    raise RedisConnectionError(f"connection to {connection.host}:{connection.port} closed")
                reader.feed(data)
            elif isinstance(reply, hiredis.ReplyError):
                out.append(BaseParser.parse_error(str(reply)))
            else:
                out.append(reply)
        return out

    def _load(self, connection: Any, command: tuple) -> None:
        source = self._scripts.get(command[1] if isinstance(command[1], str) else command[1].decode())
        if source is not None:
            connection.send_packed_command([_pack(("SCRIPT", "LOAD", source))], check_health=False)
            self._read(connection, 1)

    def _refresh(self) -> None:
        """Ask the cluster for its slot map again (a failover, a resharding)."""
        self._owners = None
        try:
            self.cluster.nodes_manager.initialize()
        except (RedisClusterException, *_DOWN):
            pass  # no node answered yet: the caller tries again until failover_wait
        for name in list(self._connections):
            if not any(nodes and nodes[0].name == name for nodes in self.cluster.nodes_manager.slots_cache.values()):
                self._connections.pop(name).disconnect()  # no longer a master
