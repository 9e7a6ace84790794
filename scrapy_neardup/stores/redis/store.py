"""``redis://host:port/db``: the store shared by several crawler processes or machines.

Check-and-add is one Lua script, so it is atomic across processes and costs one round
trip: it reads the candidate buckets, takes a document id and files the new document
before any other client can read those buckets. Of two processes racing on two copies of
one story, the second always sees the first. Verification stays on the client, against
the candidate records the script returns.

The scripts are the ``.lua`` files of ``lua/``; its README documents them and the key
layout of a namespace (``neardup:{namespace}:...``, one Redis Cluster hash tag), with its
buckets as fields of 65,536 shard hashes and, with a ``ttl``, its time windows of ``ttl / 4``.
"""

from __future__ import annotations

import logging
import math
import os
import re
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from itertools import count
from typing import Any, TypeVar
from urllib.parse import unquote, unquote_plus, urlsplit

import redis
import xxhash
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.connection import parse_url
from redis.exceptions import (
    AuthenticationError,
    BusyLoadingError,
    NoPermissionError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from redis.sentinel import MasterNotFoundError

from ...fingerprints.fingerprint import Recipe
from ...seconds import seconds
from .. import names_a_secret, receipts, redact
from ..base import (
    REPLACED,
    Confirm,
    Probe,
    Reservation,
    Store,
    StoreError,
    StoreFormatError,
    StoreLost,
    StoreOptionError,
    StoreUnavailable,
    decode_meta,
    encode_meta,
    key_buckets,
    sentence_bucket,
)
from ..pacing import Pace
from ..record import COMMITTED, HEAD_SIZE, PENDING, DocRecord, pack_text, unpack_text
from .cluster import cluster_client, is_cluster, parse_cluster_uri
from .sentinel import is_sentinel, parse_sentinel_uri, sentinel_client

T = TypeVar("T")

logger = logging.getLogger(__name__)
_TOLD: set[tuple[str, str]] = set()  # (server, warning) already logged: once per process

# Byte layout the script edits: the id is the first 8 bytes (little-endian); the state and
# the number of sentence keys are the last two bytes of the head; the keys follow it.

SHARDS = 1 << 16  # bucket shard hashes per window (4 hex digits)
WINDOWS_PER_TTL = 4  # a TTL window is ttl / 4: documents are kept 1.25 ttl at most
MAX_SECONDS = 1e12  # longest ttl or pending_timeout: 1.25 of it in ms stays far below 1e17

DEFAULT_PARAMS: dict[str, Any] = {
    "socket_timeout": 10,
    "socket_connect_timeout": 5,
    "retry_on_timeout": True,
    "health_check_interval": 30,
    # One connection per store, kept: no pool checkout and release around every call, a
    # noticeable part of a check's client CPU; calls from several threads take turns on it.
    "single_connection_client": True,
}

_CACHE_SIZE = 4096  # buckets of recent reservations, so remove() needs no read first


def _script(*names: str) -> str:
    """Lua files of ``lua/`` joined in order: later files use the functions of earlier ones."""
    folder = resources.files(__package__).joinpath("lua")
    return "\n".join(folder.joinpath(f"{name}.lua").read_text(encoding="utf-8") for name in names)


# The scripts and their files: lua/README.md, which also documents the key layout.
CHECK_AND_ADD = _script("mark", "live", "check", "check_and_add")
CHECK_AND_ADD_MANY = _script("mark", "live", "check", "check_and_add_many")
_CHECK_ARGS = 19  # arguments of one document in CHECK_AND_ADD_MANY (its ARGS)
_CALLER = slice(11, 13)  # of those, the client and the call's sequence number (the key of ``ops``)
COMMIT = _script("mark", "drop", "commit")
REMOVE = _script("mark", "drop", "remove")
REPLACE = _script("mark", "drop", "replace")
COUNT = _script("mark", "live", "count")
LOOKUP = _script("mark", "live", "lookup")
LOST = "NEARDUP_STORE_LOST"  # the error of a script whose namespace marker is gone


def get_redis(uri: str, params: dict[str, Any] | None = None) -> Any:
    """A client for ``uri`` (redis://, rediss://, unix://; password and db in the URI;
    redis+sentinel:// and redis+cluster:// as their modules say).

    ``params`` update :data:`DEFAULT_PARAMS` (any ``redis.Redis`` argument), as
    scrapy-redis's ``REDIS_PARAMS`` do; ``retries`` sets how often a command is retried
    after a lost connection or a timeout before the store gives up.
    """
    params = {**DEFAULT_PARAMS, **(params or {})}
    retries = int(params.pop("retries", 3))
    params.setdefault("retry", Retry(ExponentialBackoff(cap=2.0, base=0.05), retries))
    errors: list[type[Exception]] = [RedisConnectionError]
    if params.get("retry_on_timeout"):
        errors.append(RedisTimeoutError)
    params.setdefault("retry_on_error", errors)
    params["decode_responses"] = False  # records and bucket names are bytes
    if is_sentinel(uri):
        return sentinel_client(uri, params)
    if is_cluster(uri):
        return cluster_client(uri, params)
    return redis.Redis.from_url(uri, **params)


def _check_db(uri: str) -> None:
    """ValueError for a db that is not a number: redis-py reads ``redis://host/abc`` as db 0 and
    ``redis://host/1/2`` as db 12, so a typo would silently share db 0 with other users."""
    path = unquote(urlsplit(uri).path) if urlsplit(uri).scheme.lower() in ("redis", "rediss") else ""
    if path not in ("", "/") and not re.fullmatch(r"/\d+", path):
        raise ValueError(f"the db after the host must be a number, as in redis://host:6379/0, got {path[1:]!r}")
    parse_url(uri)


def _secrets(uri: str) -> list[str]:
    """The passwords a URI holds, as written and decoded, longest first (to scrub messages)."""
    parts = urlsplit(uri)
    found = {parts.password or ""}
    for param in parts.query.split("&"):
        name, _, value = param.partition("=")
        if names_a_secret(name):
            found.add(value)
    found |= {unquote(s) for s in found} | {unquote_plus(s) for s in found}
    return sorted(found - {""}, key=len, reverse=True)


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def _address(uri: str) -> str:
    """host:port, or the socket path, that ``uri`` connects to (as redis-py reads it); the
    sentinels and service of a ``redis+sentinel://`` URI."""
    if is_sentinel(uri):
        return parse_sentinel_uri(uri).address()
    if is_cluster(uri):
        return parse_cluster_uri(uri).address()
    options = parse_url(uri)
    return options.get("path") or f"{options.get('host', 'localhost')}:{options.get('port', 6379)}"


# What an error (or an error it arose from) means, checked in this order; {said} is the
# error's own text without passwords.
_CAUSES: list[tuple[type[BaseException], str]] = [
    (NoPermissionError, "the user lacks a permission the store needs at {address} ({said})"),
    (BusyLoadingError, "{address} is still loading its data after a restart; try again when it is done"),
    (ReadOnlyError, "{address} is a read-only replica: point the URI at the primary ({said})"),
    (OutOfMemoryError, "{address} is full (maxmemory reached): raise maxmemory or purge old documents ({said})"),
    (socket.gaierror, "unknown host {host!r} ({said})"),
    (ConnectionRefusedError, "connection refused by {address}: no Redis server listens there"),
    (FileNotFoundError, "no Unix socket at {address}: no Redis server listens there"),
    (PermissionError, "no permission to use {address}"),
    (ssl.SSLError, "TLS failed with {address} ({said}): is it a TLS port, and are the certificates right?"),
    (
        RedisTimeoutError,
        "no answer from {address} in time (socket_connect_timeout {connect_timeout} s, socket_timeout "
        "{timeout} s): the host is down or unreachable (a firewall?), or it is not a Redis server{tls}",
    ),
    (socket.timeout, "no answer from {address} within socket_timeout {timeout} s{tls}"),
]


# Each sentinel redis-py could not ask, as its MasterNotFoundError lists them: the client's
# repr (a page of internals, left out), " - ", the error.
_SENTINEL_FAILURE = re.compile(r" - (.+?)(?=, (?:<redis\.|Redis<)|$)")


# What a server without a password answers the bare form of AUTH (Redis 6 and later, before 6).
_NO_PASSWORD_SET = ("called without any password configured", "no password is set")


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the errors it arose from."""
    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in chain:
        chain.append(link)
        link = link.__cause__ or link.__context__
    return chain


def _cause(exc: BaseException, uri: str, params: dict[str, Any]) -> str:
    """What a failed Redis call means, in words a user can act on; the address, no password."""
    address, secrets = _address(uri), _secrets(uri)
    said = _scrub(str(exc), secrets)
    chain = _chain(exc)
    refused = next((link for link in chain if isinstance(link, AuthenticationError)), None)
    if refused is not None:  # a cluster client's is the cause of the error it raises
        if not (secrets or params.get("password")):
            return f"{address} requires a password, and the URI gives none"
        return f"authentication failed at {address}: wrong password or user ({_scrub(str(refused), secrets)})"
    if isinstance(exc, ResponseError) and "DB index is out of range" in said:
        return f"{address} has no such db (raise 'databases' in its configuration or use a lower db)"
    for link in chain:
        if isinstance(link, MasterNotFoundError):  # its text is a page of the clients' internals
            failed = _SENTINEL_FAILURE.findall(_scrub(str(link), secrets))
            why = (
                f"{len(failed)} could not be asked ({'; '.join(sorted({error[:200] for error in failed}))})"
                if failed
                else "those that answered know no primary of that service that is up"
            )
            return f"{address} name no primary that answers: {why}"
    for kind, template in _CAUSES:
        for link in chain:
            if isinstance(link, kind):
                return template.format(
                    address=address,
                    host=address.rsplit(":", 1)[0],
                    said=_scrub(getattr(link, "strerror", None) or str(link), secrets),
                    connect_timeout=params.get("socket_connect_timeout"),
                    timeout=params.get("socket_timeout"),
                    tls=" (for rediss://: not a TLS port)" if uri.startswith("rediss") else "",
                )
    return f"{address}: {said}"


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _member(doc_id: int) -> bytes:
    return doc_id.to_bytes(8, "big")


def _filed_by(done: bytes | None, seq: int) -> list[int]:
    """The ids that check call ``seq`` filed, from the client's entry in ``ops`` (``seq:id:keys``
    for one document, ``Bseq:id/keys;...`` for a batch); none when that call was not applied."""
    head, _, rest = (done or b"").decode("ascii").partition(":")
    if head == f"B{seq}":
        return [int(answer.partition("/")[0]) for answer in rest.split(";") if answer]
    if head == str(seq):
        return [int(rest.partition(":")[0])]
    return []


def _entry(bucket: bytes) -> bytes:
    """A bucket as the scripts take it: its length, the 4 hex digits of its shard, its name."""
    return b"%c%04x%s" % (len(bucket) + 4, xxhash.xxh32_intdigest(bucket) % SHARDS, bucket)


def _seconds(name: str, value: Any) -> float:
    """A duration the store takes: finite and positive, and short enough for its expiries,
    which the scripts handle as Lua numbers: Redis takes them as integers up to 1e17 ms only."""
    try:
        found = seconds(value)
    except ValueError as exc:
        raise ValueError(f"{name} {exc}") from None
    if found > MAX_SECONDS:
        raise StoreOptionError(
            f"the Redis store cannot keep {name} {found:g} s: its expiries hold {MAX_SECONDS:g} s at most "
            "(about 31,000 years); give a shorter time window (NEARDUP_TTL, --ttl), or none"
        )
    return found


class RedisStore(Store):
    """A namespace of a Redis server, shared by every process that opens the same URI.

    ``ttl`` (seconds) bounds the store: it is part of the store's layout, fixed when the
    namespace is created, so every process sharing a namespace gives the same one or none
    (None takes the store's own; a store created without one keeps documents until purged).
    ``pending_timeout``: how long a reservation (``reserve=True``) waits for :meth:`commit`
    before it vanishes.
    ``retries``: how often a command is retried after a lost connection or a timeout.
    ``redis_params``: extra ``redis.Redis`` arguments (timeouts, TLS files, ...).
    ``allow_eviction``: open a server whose maxmemory-policy may evict keys (with a warning);
    it is refused otherwise, since evicted fingerprints let reprints through unseen.
    ``allow_no_persistence``: open a server that keeps nothing across a restart (``save ''``
    and ``appendonly no``), with a warning; refused otherwise, since a restart empties it.
    """

    files_before_verifying = True

    @classmethod
    def from_uri(cls, uri: str, namespace: str = "default", **options: Any) -> RedisStore:
        """Takes ``ttl`` (the time window: keys expire with it), ``redis_params`` (client
        arguments over the URI's), ``redis_allow_eviction``, ``redis_allow_no_persistence`` and
        the constructor's own keywords from the options."""
        own = {
            name: options[name]
            for name in ("key_prefix", "pending_timeout", "retries", "allow_eviction", "allow_no_persistence")
            if name in options
        }
        if options.get("redis_allow_eviction"):  # NEARDUP_REDIS_ALLOW_EVICTION, --allow-eviction
            own["allow_eviction"] = True
        if options.get("redis_allow_no_persistence"):  # NEARDUP_REDIS_ALLOW_NO_PERSISTENCE, --allow-no-persistence
            own["allow_no_persistence"] = True
        ttl, params = options.get("ttl") or None, dict(options.get("redis_params") or {})
        return cls(uri, namespace, ttl=ttl, redis_params=params, **own)

    def __init__(
        self,
        uri: str,
        namespace: str = "default",
        *,
        key_prefix: str = "neardup",
        ttl: float | None = None,
        pending_timeout: float = 600.0,
        retries: int = 3,
        redis_params: dict[str, Any] | None = None,
        allow_eviction: bool = False,
        allow_no_persistence: bool = False,
    ):
        ttl = _seconds("ttl", ttl) if ttl is not None else None
        pending_timeout = _seconds("pending_timeout", pending_timeout)
        if retries < 0:
            raise ValueError(f"retries must be 0 or more, got {retries}")
        self.uri = uri
        self.namespace = namespace
        self._set_ttl(ttl)
        self.pending_timeout = pending_timeout
        self.prefix = f"{key_prefix}:{{{namespace}}}:"
        self._prefix = self.prefix.encode("utf-8")
        self._pending_ms = max(1, int(pending_timeout * 1000))
        self._secrets = _secrets(uri)
        self._pid = os.getpid()
        self._client_id = f"{self._pid}-{os.urandom(6).hex()}"
        self._seq = count(1)
        self._filed: OrderedDict[int, tuple[bytes, bytes]] = OrderedDict()
        # pending documents replacing a copy -> that copy's id, window and bucket entries
        self._replacing: dict[int, tuple[int, bytes, bytes]] = {}
        self._batch: Any = None  # the connection of start_check_and_add_many
        self._sent = count(1)  # batches sent on it
        self._unread = 0  # the batch sent on it whose answer is not read yet (0: none)
        self._to_remove: list[int] = []  # documents to take out with the next call (remove_later)
        self._unanswered: tuple[Any, ...] | None = None  # (client, seq) of a check whose answer was lost
        self._closed = False
        self.allow_eviction = allow_eviction
        self.allow_no_persistence = allow_no_persistence
        self._highest_id = 0  # the highest id this process was handed: ids never go back
        self._mark = b""  # the namespace's marker, read at open (see lua/mark.lua)
        netloc = urlsplit(uri).netloc
        if netloc and "@" in uri.partition("://")[2][len(netloc) :]:
            raise StoreUnavailable(
                f"bad Redis store URI {redact(uri)}: an '@' follows its host, so its password holds "
                "a raw '#', '/', '?' or '@': write them percent-encoded (%23, %2F, %3F, %40, and "
                "'%' as %25), or give the password in NEARDUP_REDIS_PARAMS ({'password': ...})"
            )
        self._params = {**DEFAULT_PARAMS, **(redis_params or {})}
        try:
            if is_sentinel(uri):
                parse_sentinel_uri(uri)
            elif is_cluster(uri):
                parse_cluster_uri(uri)
            else:
                _check_db(uri)
        except ValueError as exc:
            raise StoreUnavailable(f"bad Redis store URI {redact(uri)}: {_scrub(str(exc), self._secrets)}") from exc
        try:
            self.client = get_redis(uri, {"retries": retries, **self._params})
        except TypeError as exc:  # a name redis.Redis does not take
            raise StoreUnavailable(f"bad Redis client parameter in NEARDUP_REDIS_PARAMS or the URI: {exc}") from exc
        except RedisError as exc:  # the client connects as it is made (a cluster's does)
            raise self._cannot_open(exc) from exc
        self._check_and_add = self.client.register_script(CHECK_AND_ADD)
        self._check_and_add_many = self.client.register_script(CHECK_AND_ADD_MANY)
        self._commit = self.client.register_script(COMMIT)
        self._remove = self.client.register_script(REMOVE)
        self._replace = self.client.register_script(REPLACE)
        self._count = self.client.register_script(COUNT)
        self._lookup = self.client.register_script(LOOKUP)
        try:
            self.client.ping()
        except RedisError as exc:
            self.client.close()
            raise self._cannot_open(exc) from exc

    def _set_ttl(self, ttl: float | None) -> None:
        self.ttl = float(ttl) if ttl else None
        self._ttl_ms = math.ceil(self.ttl * 1000) if self.ttl else 0
        self._window = self.ttl / WINDOWS_PER_TTL if self.ttl else 0.0
        self._layout = {"shards": SHARDS, "window": self._window}

    # -- errors ---------------------------------------------------------------------------

    def _cause(self, exc: BaseException) -> str:
        return _cause(exc, self.uri, self._params)

    def _cannot_open(self, exc: BaseException) -> StoreUnavailable:
        """Why the store cannot be opened. A server with no password refuses the bare form of
        AUTH (a cluster client authenticates as it connects): told as :meth:`_check_password`
        tells a password such a server would accept."""
        for link in _chain(exc):
            if isinstance(link, AuthenticationError) and any(text in str(link) for text in _NO_PASSWORD_SET):
                return self._needless_password()
        return StoreUnavailable(f"cannot open the Redis store {redact(self.uri)}: {self._cause(exc)}")

    def _after_fork(self) -> None:
        """A forked child opens its own connection and takes its own client id for retries."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._client_id = f"{self._pid}-{os.urandom(6).hex()}"
            for connection in (self.client.connection, self._batch):
                if connection is not None:
                    connection.disconnect()  # closes the child's copy of the socket only
            self._unread = 0  # the parent's answer, if any, is the parent's to read
            self._to_remove = []  # and so are its removals

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a Redis call; the client has already retried; lost connections become StoreUnavailable.

        Documents queued by :meth:`remove_later` go out first, so this process never reads them.
        """
        self._after_fork()
        if self._to_remove or self._unanswered:
            self._remove_now(self._removals())
        try:
            return fn(*args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            raise StoreUnavailable(
                f"lost the Redis store {self.describe()} after retrying: {self._cause(exc)}"
            ) from exc
        except RedisError as exc:
            if LOST in str(exc):
                raise self._lost("its marker is gone") from exc
            raise StoreError(f"Redis store {self.describe()} failed: {self._cause(exc)}") from exc

    def _check_id(self, doc_id: int) -> None:
        """Ids handed to this process only grow: one below an earlier one means the server went
        back to an older copy of its data (restarted from a snapshot), and the ids since are
        being handed out again. (The same id again is the answer to a call sent twice.)"""
        if doc_id < self._highest_id:
            raise self._lost(
                f"its id counter went back (id {doc_id} handed out, after {self._highest_id}): Redis "
                "restarted from an older snapshot of its data"
            )
        self._highest_id = max(self._highest_id, doc_id)
        receipts.record_now_and_then(self)

    def _lost(self, what: str) -> StoreLost:
        return StoreLost(
            f"the Redis store {self.describe()} lost its data: {what}. Redis was restarted without "
            "persistence, flushed, or evicted keys, and every story stored before is forgotten; "
            "stopping rather than keeping every reprint. Enable persistence on the server "
            "(appendonly yes, or save points such as 'save 300 10', in redis.conf or with CONFIG SET) "
            "and keep maxmemory-policy noeviction, then start again"
        )

    def describe(self) -> str:
        return f"{redact(self.uri)} (namespace {self.namespace!r})"

    # -- meta -----------------------------------------------------------------------------

    def _key(self, name: str) -> bytes:
        return self._prefix + name.encode("utf-8")

    def open(self, recipe: Recipe, create: bool = True) -> None:
        self._check_password()
        self._check_server()
        super().open(recipe, create)
        layout = (self.read_meta() or {}).get("layout")
        if self.ttl is None and layout and layout.get("window") and layout.get("shards") == SHARDS:
            self._set_ttl(layout["window"] * WINDOWS_PER_TTL)  # no TTL given: the store's own
        if layout != self._layout:
            stored_ttl = layout["window"] * WINDOWS_PER_TTL if layout and layout.get("window") else None
            raise StoreFormatError(
                f"store {self.describe()} was created with ttl {stored_ttl!r} (layout {layout}), "
                f"this process configures ttl {self.ttl!r}: every process sharing a Redis "
                "namespace must use the same TTL; use the stored one or a new namespace"
            )
        self._mark = self._read_mark()

    def read_meta(self) -> dict | None:
        return decode_meta(self._call(self.client.get, self._key("meta")), self.describe())

    def upgrade_meta(self, meta: dict) -> None:
        """Write ``meta`` over the stored one: the namespace exists (write_meta creates it)."""
        self._call(self.client.set, self._key("meta"), encode_meta(meta))

    def write_meta(self, meta: dict) -> None:
        """Create the namespace: its meta, then its marker (when another process created it
        at the same moment, check against its meta)."""
        if self._call(self.client.exists, self._key("n"), self._key("t")):
            raise self._lost("it holds documents but no meta key")
        meta = {**meta, "layout": self._layout}
        if not self._call(self.client.set, self._key("meta"), encode_meta(meta), nx=True):
            Store.open(self, self.recipe)

    def _read_mark(self) -> bytes:
        """The namespace's marker; the first process to open a namespace writes it (the others
        only read it, so a read-only replica opens for the commands that only look)."""
        found = self._call(self.client.get, self._key("mark"))
        if found is not None:
            return found
        pipe = self.client.pipeline(transaction=True)
        pipe.set(self._key("mark"), os.urandom(8).hex(), nx=True)
        pipe.get(self._key("mark"))
        return self._call(pipe.execute)[1]

    # -- the server's configuration -------------------------------------------------------

    def _check_server(self) -> None:
        """Refuse a server that may evict keys (unless allowed); warn once about one that keeps
        nothing across a restart. CONFIG may be refused (managed Redis): INFO tells the policy."""
        self._check_settings(self._server_settings(self.client), _address(self.uri))

    def _check_settings(self, found: dict[str, str], address: str) -> None:
        """:meth:`_check_server` on the settings ``found`` on the server at ``address``."""
        policy, maxmemory = found.get("maxmemory-policy"), int(found.get("maxmemory") or 0)
        if policy is None:
            self._tell(
                address,
                "could not read the maxmemory-policy of %s (CONFIG and INFO refused): "
                "make sure it is noeviction, or evicted fingerprints let reprints through",
                address,
            )
        elif policy != "noeviction" and maxmemory:
            risk = (
                f"Redis at {address} may evict keys (maxmemory-policy {policy}, maxmemory {maxmemory} "
                "bytes): fingerprints it drops let their reprints through unseen"
            )
            if not self.allow_eviction:
                raise StoreUnavailable(
                    f"{risk}. Set maxmemory-policy noeviction on the server (CONFIG SET maxmemory-policy "
                    "noeviction, and in redis.conf), or accept it with NEARDUP_REDIS_ALLOW_EVICTION = True "
                    "(neardup --allow-eviction)"
                )
            self._tell(address, "%s (accepted: NEARDUP_REDIS_ALLOW_EVICTION)", risk)
        if found.get("save") == "" and found.get("appendonly") == "no":
            risk = (
                f"Redis at {address} keeps no data across a restart (save '' and appendonly no): a restart "
                "empties its stores, and every story stored before is forgotten"
            )
            if not self.allow_no_persistence:
                raise StoreUnavailable(
                    f"{risk}. Enable persistence on the server: appendonly yes, or save points such as "
                    "'save 300 10' (redis.conf, or CONFIG SET), or accept it with "
                    "NEARDUP_REDIS_ALLOW_NO_PERSISTENCE = True (neardup --allow-no-persistence)"
                )
            self._tell(address, "%s (accepted: NEARDUP_REDIS_ALLOW_NO_PERSISTENCE)", risk)

    def _check_password(self) -> None:
        """Refuse a password that the server ignores: a server whose default user has no
        password accepts any, so the URI's password protects nothing there, and the server may
        not be the one meant. Asked by connecting once without it."""
        pool = self._node_pool()
        given = pool.connection_kwargs
        if is_sentinel(self.uri) or not given.get("password") or given.get("username") not in (None, "", "default"):
            return
        bare = {name: value for name, value in given.items() if name not in ("password", "username")}
        bare["retry"] = Retry(NoBackoff(), 0)  # the refusal is the answer: asking again only waits
        probe = redis.Redis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **bare))
        try:
            probe.ping()
        except RedisError:
            return  # NOAUTH: the password is needed; any other failure is for the real client to meet
        finally:
            probe.connection_pool.disconnect()
        raise self._needless_password()

    def _node_pool(self) -> Any:
        """The connection pool of the server :meth:`_check_password` asks."""
        return self.client.connection_pool

    def _needless_password(self) -> StoreUnavailable:
        return StoreUnavailable(
            f"the Redis store URI {redact(self.uri)} gives a password, but {_address(self.uri)} requires "
            "none and accepts any: is it the server you meant? Remove the password from the URI (and "
            "NEARDUP_REDIS_PARAMS), or protect the server with requirepass"
        )

    def _server_settings(self, client: Any) -> dict[str, str]:
        names = ("maxmemory", "maxmemory-policy", "save", "appendonly")
        try:
            pipe = client.pipeline(transaction=False)
            for name in names:
                pipe.config_get(name)
            replies = self._call(pipe.execute)
        except StoreError as exc:
            if not isinstance(exc.__cause__, ResponseError):
                raise
            try:  # CONFIG refused or renamed
                info = self._call(client.info, "memory")
            except StoreError as exc:
                if not isinstance(exc.__cause__, ResponseError):
                    raise
                return {}
            found = {"maxmemory": info.get("maxmemory"), "maxmemory-policy": info.get("maxmemory_policy")}
            return {name: str(value) for name, value in found.items() if value is not None}
        return {_text(k): _text(v) for reply in replies for k, v in reply.items()}

    @staticmethod
    def _tell(address: str, message: str, *args: Any) -> None:
        if (address, message) not in _TOLD:
            _TOLD.add((address, message))
            logger.warning(message, *args)

    # -- documents ------------------------------------------------------------------------

    def _cutoff(self, now: float) -> str:
        return f"({now - self.ttl!r}" if self.ttl else ""

    def _window_of(self, when: float) -> bytes:
        return b"%d" % (when // self._window) if self._window else b"0"

    def _windows(self, now: float) -> bytes:
        """The windows a document of time ``now`` is compared with, oldest first."""
        if not self._window:
            return b"0"
        assert self.ttl is not None  # windows come with a time window
        first, last = int((now - self.ttl) // self._window), int(now // self._window)
        return b",".join(b"%d" % w for w in range(first, last + 1))

    def check_and_add(self, probe: Probe, record: DocRecord, confirm: Confirm | None = None) -> Reservation:
        args, sentence_keys, filing = self._check_args(probe, record)
        try:
            reply = self._call(self._check_and_add, keys=[], args=args)
        except StoreUnavailable:
            self._unanswered = tuple(args[_CALLER])
            raise
        return self._reserved(record, reply, sentence_keys, filing)

    def check_and_add_many(self, probes: list[Probe], records: list[DocRecord]) -> list[Reservation]:
        """:meth:`check_and_add` for several documents in one script call (one round trip).

        The script checks them one after the other, so each document sees the ones before it;
        the caller verifies them in order (see ``Detector.check_many``).
        """
        return self.start_check_and_add_many(probes, records)()

    def start_check_and_add_many(
        self, probes: list[Probe], records: list[DocRecord], confirms: Sequence[Confirm | None] | None = None
    ) -> Callable[[], list[Reservation]]:
        """Send the batch's script call and return at once; the function returned reads the
        answer. The server checks the batch while the caller works (fingerprints the next).

        The call goes over a connection of its own, so other calls in between do not read
        its answer, and documents queued by :meth:`remove_later` (the last batch's duplicates)
        go out ahead of it in the same round trip. If sending or reading fails, or the server
        lost the script, the batch is sent again the usual way (with the client's retries);
        a batch the server had applied then gets the same answer again (see ``ops``).
        """
        if not records:
            return lambda: []
        every: list[Any] = []
        calls = []
        for probe, record in zip(probes, records):
            args, sentence_keys, filing = self._check_args(probe, record)
            every += args
            calls.append((record, sentence_keys, filing))
        connection = self._batch_connection()
        removals, ticket = self._removals(), next(self._sent)
        commands = [("EVALSHA", self._remove.sha, 0, *args) for args in removals]
        commands.append(("EVALSHA", self._check_and_add_many.sha, 0, *every))
        try:
            connection.send_packed_command(connection.pack_commands(commands))
            self._unread = ticket
        except (RedisError, OSError):
            connection.disconnect()

        def receive() -> list[Reservation]:
            replies = None
            if self._unread == ticket:
                self._unread = 0
                try:
                    for _ in removals:
                        connection.read_response()
                    replies = connection.read_response()
                except Exception:  # lost, timed out, NOSCRIPT after a restart, a closed socket
                    connection.disconnect()  # (the parser without hiredis raises AttributeError)
            if replies is None:  # removing twice changes nothing
                try:
                    self._remove_now(removals)
                    replies = self._call(self._check_and_add_many, keys=[], args=every)
                except StoreUnavailable:
                    self._unanswered = tuple(every[_CALLER])  # the batch is named by its first document's
                    raise
            return [
                self._reserved(record, reply, sentence_keys, filing)
                for (record, sentence_keys, filing), reply in zip(calls, replies)
            ]

        return receive

    def _batch_connection(self) -> Any:
        """The connection batches are sent on; an answer nobody read is dropped with it."""
        self._after_fork()
        if self._batch is None:
            for script in (CHECK_AND_ADD_MANY, REMOVE):  # sent by hash from now on
                self._call(self.client.script_load, script)
            self._batch = self.client.connection_pool.get_connection()
        elif self._unread:
            self._unread = 0
            self._batch.disconnect()  # the next command connects again
        return self._batch

    def _check_args(self, probe: Probe, record: DocRecord) -> tuple[list[Any], list[int], tuple]:
        """The script's arguments, the sentence keys asked for and the bucket entries used."""
        self._after_fork()
        record.doc_id = 0
        sentence_keys = list(probe.sentence_keys)
        record.sentence_keys = []
        sentences = [_entry(sentence_bucket(k)) for k in sentence_keys]
        own_key = [_entry(b) for b in key_buckets(record.key)]
        read = [_entry(b) for b in probe.simhash_buckets] + own_key
        # The probe's SimHash buckets are the record's own (empty when SimHash is not a method).
        file_entries = (
            read if probe.simhash_buckets else [_entry(b) for b in self.tables.keys(record.simhash)] + own_key
        )
        window_ms = 0
        if self._window:
            assert self.ttl is not None  # windows come with a time window
            window_end = (record.time // self._window + 1) * self._window
            window_ms = max(1, math.ceil((window_end + self.ttl - record.time) * 1000))
        args: list[Any] = [
            self._prefix,
            self._cutoff(record.time),
            self._windows(record.time),
            record.to_bytes(),
            repr(float(record.time)),
            self._ttl_ms,
            window_ms,
            self._pending_ms if record.state == PENDING else 0,
            probe.nshash_n,
            probe.boilerplate_limit,
            probe.bucket_read_limit,
            f"{self._client_id}-{threading.get_ident()}",
            next(self._seq),
            HEAD_SIZE,
            b"".join(sentences),
            b"".join(read),
            b"".join(file_entries),
            self._mark,
            b"" if record.text is None else pack_text(record.text),
        ]
        assert len(args) == _CHECK_ARGS
        return args, sentence_keys, (sentences, file_entries)

    def _reserved(self, record: DocRecord, reply: list, sentence_keys: list[int], filing: tuple) -> Reservation:
        sentences, file_entries = filing
        record.doc_id = int(reply[0])
        self._check_id(record.doc_id)
        filed = [int(i) - 1 for i in reply[1]]
        record.sentence_keys = [sentence_keys[i] for i in filed]
        # Remember where it was filed, so that removing a duplicate costs no read.
        self._filed[record.doc_id] = (
            self._window_of(record.time),
            b"".join([sentences[i] for i in filed] + file_entries),
        )
        while len(self._filed) > _CACHE_SIZE:
            self._filed.popitem(last=False)
        candidates = [DocRecord.from_bytes(data) for data in reply[2:]]
        return Reservation(record.doc_id, candidates, record.sentence_keys)

    def _where(self, record: DocRecord | None) -> tuple[bytes, bytes]:
        """The window and bucket entries a document is filed under."""
        if record is None:
            return b"0", b""
        return self._window_of(record.time), b"".join(_entry(b) for b in self.buckets_of(record))

    def remove(self, doc_id: int) -> None:
        self.remove_many([doc_id])

    def remove_many(self, doc_ids: list[int]) -> None:
        """Take documents out, in one round trip when they were filed by this process."""
        self._to_remove += doc_ids
        self._remove_now(self._removals())

    def remove_later(self, doc_ids: list[int]) -> None:
        """Take documents out with this store's next call: a batch's duplicates go out with the
        next batch, in its round trip. Other processes may see them until then (a copy of a
        story they hold is still judged a copy), and a process killed in between leaves them
        stored as documents of their own."""
        self._to_remove += doc_ids

    def _take_back_unanswered(self) -> None:
        """Queue for removal the documents filed by a check whose answer was lost (the server
        went away before it could be sent again), if the server applied it: ``ops`` says so.
        Nobody learnt their ids, and the item's check, made again, would meet them as a copy
        of itself (a revisit of its own reservation: its story kept by no one)."""
        if self._unanswered is None:
            return
        client, seq = self._unanswered
        self._unanswered = None
        try:
            done = self._call(self.client.hget, self._key("ops"), client)
        except StoreUnavailable:
            self._unanswered = client, seq
            raise
        self._to_remove += _filed_by(done, seq)

    def _removals(self) -> list[list[Any]]:
        """The REMOVE script arguments of the queued documents, taken off the queue."""
        self._take_back_unanswered()
        doc_ids, self._to_remove = self._to_remove, []
        removals = []
        for doc_id in doc_ids:
            self._replacing.pop(doc_id, None)
            where = self._filed.pop(doc_id, None) or self._where(self.get(doc_id))
            removals.append([self._prefix, doc_id, _member(doc_id), *where, self._mark])
        return removals

    def _remove_now(self, removals: list[list[Any]]) -> int:
        """Run REMOVE scripts in one round trip; how many records they deleted."""
        if not removals:
            return 0
        pipe = self.client.pipeline(transaction=False)
        for args in removals:
            self._remove(keys=[], args=args, client=pipe)
        try:
            return sum(int(existed) for existed in self._call(pipe.execute))
        except StoreUnavailable:  # queued again, for the next call
            for _, doc_id, _, window, blob, _ in removals:
                self._filed[doc_id] = (window, blob)
                self._to_remove.append(doc_id)
            raise

    def commit(self, doc_id: int) -> None:
        self._filed.pop(doc_id, None)
        # the state byte is the next to last byte of the head (1-based position for Lua)
        args = [self._prefix, doc_id, _member(doc_id), HEAD_SIZE - 1, self._ttl_ms, self._mark]
        replacing = self._replacing.pop(doc_id, None)
        if replacing is not None:  # the copy it replaces goes in the same step
            old_id, window, blob = replacing
            args += [old_id, _member(old_id), window, blob]
        self._call(self._commit, keys=[], args=args)

    def replace(self, record: DocRecord, old: DocRecord) -> int:
        """One script call (lua/replace.lua); a pending document remembers where the copy it
        replaces is filed, for its commit."""
        kept = record.story, record.replaces
        record.story, record.replaces = old.story_id, old.doc_id
        window, blob = self._where(old)
        args = [
            self._prefix,
            self._mark,
            record.doc_id,
            record.to_bytes(),
            int(record.state == COMMITTED),
            self._pending_ms,
            old.doc_id,
            _member(old.doc_id),
            window,
            blob,
        ]
        held = int(self._call(self._replace, keys=[], args=args))
        if held != REPLACED:
            record.story, record.replaces = kept
        elif record.state == PENDING:
            self._replacing[record.doc_id] = (old.doc_id, window, blob)
        return held

    def get(self, doc_id: int) -> DocRecord | None:
        data = self._call(self.client.get, self._key(f"r:{doc_id}"))
        return None if data is None else DocRecord.from_bytes(data)

    # A purge beside crawlers that share the server can rest between its batches.
    paces_purges = True

    def purge(self, older_than: float, background: bool = False) -> int:
        """Remove documents older than ``older_than`` with their bucket entries, in batches;
        a ``background`` purge, beside crawlers sharing the server, rests after each
        (:class:`~scrapy_neardup.stores.pacing.Pace`)."""
        removed = 0
        pace = Pace() if background else None
        while True:
            old = self._call(self.client.zrangebyscore, self._key("t"), "-inf", f"({older_than!r}", start=0, num=500)
            if not old:
                return removed
            pipe = self.client.pipeline(transaction=False)
            for member in old:
                pipe.get(self._key(f"r:{int.from_bytes(member, 'big')}"))
            records = self._call(pipe.execute)
            removals = []
            for member, data in zip(old, records):
                doc_id = int.from_bytes(member, "big")
                self._filed.pop(doc_id, None)
                where = self._where(DocRecord.from_bytes(data) if data is not None else None)
                removals.append([self._prefix, doc_id, member, *where, self._mark])
            removed += self._remove_now(removals)
            if pace is not None:
                pace.rest()

    def find_candidates(self, probes: list[Probe]) -> list[list[DocRecord]]:
        """Every probe's candidates in one read-only script call (lua/lookup.lua)."""
        if not probes:
            return []
        self._after_fork()
        args: list[Any] = [self._prefix, b"", self._windows(time.time()), self._mark]
        args += [probes[0].boilerplate_limit, probes[0].bucket_read_limit]
        for probe in probes:
            args.append(b"".join(_entry(sentence_bucket(k)) for k in probe.sentence_keys))
            args.append(b"".join(_entry(b) for b in probe.simhash_buckets))
        replies = self._call(self._lookup, keys=[], args=args)
        return [[DocRecord.from_bytes(data) for data in reply] for reply in replies]

    def texts(self, doc_ids: list[int]) -> dict[int, str]:
        if not doc_ids:
            return {}
        found = self._call(self.client.mget, [self._key(f"x:{doc_id}") for doc_id in doc_ids])
        return {doc_id: unpack_text(data) for doc_id, data in zip(doc_ids, found) if data is not None}

    def records(self) -> Iterator[DocRecord]:
        """Records in time order, read from the time index 500 at a time."""
        start = 0
        while True:
            members = self._call(self.client.zrange, self._key("t"), start, start + 499)
            if not members:
                return
            start += len(members)
            pipe = self.client.pipeline(transaction=False)
            for member in members:
                pipe.get(self._key(f"r:{int.from_bytes(member, 'big')}"))
            for data in self._call(pipe.execute):
                if data is not None:  # expired since
                    yield DocRecord.from_bytes(data)

    def count(self) -> int:
        now = time.time()
        args = [self._prefix, self._cutoff(now), b"0", self._mark]
        try:
            return int(self._call(self._count, keys=[], args=args))
        except StoreError as exc:
            if not isinstance(exc.__cause__, ReadOnlyError):
                raise
        # A read-only replica cannot reap: the documents in the window, with any reservation
        # that expired since the primary's last call.
        return int(self._call(self.client.zcount, self._key("t"), self._cutoff(now) or "-inf", "+inf"))

    def location(self) -> str:
        return redact(self.uri)

    def last_id(self) -> int:
        """The namespace's id counter, or the highest id this process was handed when that is
        higher (the server lost its data: the receipt keeps what it had)."""
        try:
            counter = int(self._call(self.client.get, self._key("n")) or 0)
        except StoreError:
            counter = 0  # gone or lost: what this process saw is all there is to record
        return max(counter, self._highest_id)

    def marker(self) -> str | None:
        return self._mark.decode("ascii", "replace") if self._mark else None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._remove_now(self._removals())
        except StoreError:
            pass  # the server went away: they stay, as documents of their own
        if self._mark:  # opened: what it held now is this machine's receipt
            receipts.record(self)
        try:
            self.client.hdel(self._key("ops"), f"{self._client_id}-{threading.get_ident()}")
        except RedisError:
            pass  # closing after the server went away is not an error
        if self._batch is not None:
            self._batch.disconnect()
        self.client.close()
