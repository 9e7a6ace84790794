"""``redis://host:port/db``: the store shared by several crawler processes or machines.

Check-and-add is one Lua script, so it is atomic across processes and costs one round
trip: it reads the candidate buckets, takes a document id and files the new document
before any other client can read those buckets. Of two processes racing on two copies of
one story, the second always sees the first. Verification stays on the client, against
the candidate records the script returns.

Layout of a namespace (``P`` = ``neardup:{namespace}:``; the braces make the namespace a
Redis Cluster hash tag, so all keys of a namespace live in one slot)::

    P meta           string  format version and recipe (JSON)
    P n              string  last document id (INCR)
    P r:<id>         string  document record (DocRecord bytes); PX ttl, or PX pending_timeout
    P b:<bucket>     zset    8-byte big-endian ids scored by document time; PX ttl
    P t              zset    time index: every stored id scored by time (purge, count)
    P p              zset    pending ids scored by their deadline (server ms)
    P ops            hash    client -> its last check-and-add, so a retried call is not applied twice

Bounded growth: with ``ttl`` every record and bucket key expires, and the script trims
members older than the window from every bucket it touches. A pending reservation of a
process that died expires after ``pending_timeout``; bucket members whose record has gone
are removed when a script reads them, so they never count as candidates or boilerplate.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from itertools import count
from typing import Any, Callable, TypeVar
from urllib.parse import unquote, urlsplit

import redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from ..record import _HEAD, PENDING, DocRecord
from . import redact
from .base import (
    Probe,
    Reservation,
    Store,
    StoreError,
    StoreUnavailable,
    decode_meta,
    encode_meta,
    sentence_bucket,
)

T = TypeVar("T")

# Byte layout the script edits: the id is the first 8 bytes (little-endian); the state and
# the number of sentence keys are the last two bytes of the head; the keys follow it.
_HEAD_SIZE = _HEAD.size

DEFAULT_PARAMS: dict[str, Any] = {
    "socket_timeout": 10,
    "socket_connect_timeout": 5,
    "retry_on_timeout": True,
    "health_check_interval": 30,
}

_CACHE_SIZE = 4096  # buckets of recent reservations, so remove() needs no read first

_LIVE = """
local P = ARGV[1]
local cutoff = ARGV[2]   -- '' or '(' .. (time - ttl): older bucket members are trimmed

local function member_id(m)
  local id = 0
  for i = 1, 8 do id = id * 256 + string.byte(m, i) end
  return id
end

local function id_member(id)
  local b = {}
  for i = 8, 1, -1 do b[i] = string.char(id % 256); id = math.floor(id / 256) end
  return table.concat(b)
end

local records = {}
local function fetch(id)
  local r = records[id]
  if r == nil then
    r = redis.call('GET', P .. 'r:' .. id)
    records[id] = r
  end
  return r
end

-- Up to `limit` ids of a bucket whose record still exists, oldest first. Members whose
-- record expired (ttl, pending timeout) are removed on the way.
local function live(bucket, limit)
  local key = P .. 'b:' .. bucket
  if cutoff ~= '' then redis.call('ZREMRANGEBYSCORE', key, '-inf', cutoff) end
  local out = {}
  while #out < limit do
    local want = limit - #out
    local got = redis.call('ZRANGE', key, #out, #out + want - 1)
    local stale = {}
    for _, m in ipairs(got) do
      local id = member_id(m)
      if fetch(id) then out[#out + 1] = id else stale[#stale + 1] = m end
    end
    if #stale > 0 then redis.call('ZREM', key, unpack(stale)) end
    if #got < want or #stale == 0 then break end
  end
  return out
end

-- Forget pending reservations whose deadline passed (their process died or hung).
local function reap()
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local expired = redis.call('ZRANGEBYSCORE', P .. 'p', '-inf', now_ms, 'LIMIT', 0, 100)
  for _, m in ipairs(expired) do
    redis.call('DEL', P .. 'r:' .. member_id(m))
    redis.call('ZREM', P .. 't', m)
    redis.call('ZREM', P .. 'p', m)
  end
  if cutoff ~= '' then redis.call('ZREMRANGEBYSCORE', P .. 't', '-inf', cutoff) end
  return now_ms
end
"""

CHECK_AND_ADD = _LIVE + """
local rec = ARGV[3]                      -- DocRecord bytes, doc id 0 and no sentence keys
local score = ARGV[4]                    -- the document's time
local ttl_ms = tonumber(ARGV[5])         -- 0: kept until purged
local pending_ms = tonumber(ARGV[6])     -- 0: committed at once
local n = tonumber(ARGV[7])              -- sentence keys to file at most
local boilerplate = tonumber(ARGV[8])    -- a sentence bucket this full is boilerplate
local read_limit = tonumber(ARGV[9])     -- members read from one SimHash bucket
local client, seq = ARGV[10], ARGV[11]
local head = tonumber(ARGV[12])
local ns, nr, nf = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15])
local S = 16                             -- ns sentence buckets, longest sentence first
local R = S + ns                         -- nr SimHash buckets to read
local F = R + nr                         -- nf SimHash buckets to file the document under

local now_ms = reap()

local candidates, seen = {}, {}
local function add(ids, below)
  for _, id in ipairs(ids) do
    if not seen[id] and (below == nil or id < below) then
      seen[id] = true
      candidates[#candidates + 1] = id
    end
  end
end

local function reply(id, filed)
  local out = {id, filed}
  for _, c in ipairs(candidates) do
    local r = fetch(c)
    if r then out[#out + 1] = r end
  end
  return out
end

-- A retry of a call that was applied but whose answer was lost: answer it again.
local done = redis.call('HGET', P .. 'ops', client)
if done then
  local dseq, did, dfiled = string.match(done, '^([^:]*):([^:]*):(.*)$')
  if dseq == seq then
    local id = tonumber(did)
    local filed = {}
    for i in string.gmatch(dfiled, '%d+') do
      filed[#filed + 1] = tonumber(i)
      add(live(ARGV[S + tonumber(i) - 1], boilerplate), id)
    end
    for i = 0, nr - 1 do add(live(ARGV[R + i], read_limit), id) end
    return reply(id, filed)
  end
end

local filed = {}
for i = 1, ns do
  if #filed == n then break end
  local members = live(ARGV[S + i - 1], boilerplate)
  if #members < boilerplate then   -- else boilerplate: neither key nor evidence
    filed[#filed + 1] = i
    add(members)
  end
end
for i = 0, nr - 1 do add(live(ARGV[R + i], read_limit)) end

local id = redis.call('INCR', P .. 'n')
local m = id_member(id)
local keys = {}
for _, i in ipairs(filed) do keys[#keys + 1] = string.reverse(string.sub(ARGV[S + i - 1], 2)) end
local body = string.reverse(m) .. string.sub(rec, 9, head - 1) .. string.char(#filed)
  .. table.concat(keys) .. string.sub(rec, head + 1)
local expire = ttl_ms
if pending_ms > 0 then expire = pending_ms end
if expire > 0 then
  redis.call('SET', P .. 'r:' .. id, body, 'PX', expire)
else
  redis.call('SET', P .. 'r:' .. id, body)
end

local function file(bucket)
  local key = P .. 'b:' .. bucket
  redis.call('ZADD', key, score, m)
  if ttl_ms > 0 then redis.call('PEXPIRE', key, ttl_ms) end
end
for _, i in ipairs(filed) do file(ARGV[S + i - 1]) end
for i = 0, nf - 1 do file(ARGV[F + i]) end
redis.call('ZADD', P .. 't', score, m)
if pending_ms > 0 then redis.call('ZADD', P .. 'p', now_ms + pending_ms, m) end
redis.call('HSET', P .. 'ops', client, seq .. ':' .. id .. ':' .. table.concat(filed, ','))
redis.call('PEXPIRE', P .. 'ops', 3600000)
return reply(id, filed)
"""

COMMIT = """
local P, id, m = ARGV[1], ARGV[2], ARGV[3]
local state, ttl_ms = tonumber(ARGV[4]), tonumber(ARGV[5])   -- state: 1-based byte position
redis.call('ZREM', P .. 'p', m)
local key = P .. 'r:' .. id
local rec = redis.call('GET', key)
if not rec then return 0 end
if string.byte(rec, state) ~= 0 then
  rec = string.sub(rec, 1, state - 1) .. '\\0' .. string.sub(rec, state + 1)
  if ttl_ms > 0 then redis.call('SET', key, rec, 'PX', ttl_ms) else redis.call('SET', key, rec) end
end
return 1
"""

REMOVE = """
local P, id, m = ARGV[1], ARGV[2], ARGV[3]
local existed = redis.call('DEL', P .. 'r:' .. id)
redis.call('ZREM', P .. 't', m)
redis.call('ZREM', P .. 'p', m)
for i = 4, #ARGV do redis.call('ZREM', P .. 'b:' .. ARGV[i], m) end
return existed
"""

COUNT = _LIVE + """
reap()
return redis.call('ZCARD', P .. 't')
"""


def get_redis(uri: str, params: dict[str, Any] | None = None) -> redis.Redis:
    """A client for ``uri`` (redis://, rediss://, unix://; password and db in the URI).

    ``params`` update :data:`DEFAULT_PARAMS` (any ``redis.Redis`` argument), as
    scrapy-redis's ``REDIS_PARAMS`` do; ``retries`` sets how often a command is retried
    after a lost connection or a timeout before the store gives up.
    """
    params = {**DEFAULT_PARAMS, **(params or {})}
    retries = int(params.pop("retries", 3))
    params.setdefault("retry", Retry(ExponentialBackoff(cap=2.0, base=0.05), retries))
    errors = [RedisConnectionError]
    if params.get("retry_on_timeout"):
        errors.append(RedisTimeoutError)
    params.setdefault("retry_on_error", errors)
    params["decode_responses"] = False  # records and bucket names are bytes
    return redis.Redis.from_url(uri, **params)


def _member(doc_id: int) -> bytes:
    return doc_id.to_bytes(8, "big")


class RedisStore(Store):
    """A namespace of a Redis server, shared by every process that opens the same URI."""

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
    ):
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be positive seconds or None, got {ttl}")
        if pending_timeout <= 0:
            raise ValueError(f"pending_timeout must be positive seconds, got {pending_timeout}")
        if retries < 0:
            raise ValueError(f"retries must be 0 or more, got {retries}")
        self.uri = uri
        self.namespace = namespace
        self.ttl = ttl
        self.pending_timeout = pending_timeout
        self.prefix = f"{key_prefix}:{{{namespace}}}:"
        self._prefix = self.prefix.encode("utf-8")
        self._ttl_ms = int(ttl * 1000) if ttl else 0
        self._pending_ms = max(1, int(pending_timeout * 1000))
        self._password = urlsplit(uri).password
        self._client_id = f"{os.getpid()}-{os.urandom(6).hex()}"
        self._seq = count(1)
        self._filed: OrderedDict[int, list[bytes]] = OrderedDict()
        self._closed = False
        try:
            self.client = get_redis(uri, {"retries": retries, **(redis_params or {})})
        except (ValueError, RedisError) as exc:
            raise StoreUnavailable(f"bad Redis store URI {redact(uri)}: {self._scrub(exc)}") from exc
        self._check_and_add = self.client.register_script(CHECK_AND_ADD)
        self._commit = self.client.register_script(COMMIT)
        self._remove = self.client.register_script(REMOVE)
        self._count = self.client.register_script(COUNT)
        try:
            self.client.ping()
        except RedisError as exc:
            self.client.close()
            raise StoreUnavailable(
                f"cannot reach the Redis store {redact(uri)}: {self._scrub(exc)}; "
                "check that redis-server runs there and that the URI, password and db are right"
            ) from exc

    # -- errors ---------------------------------------------------------------------------

    def _scrub(self, exc: BaseException) -> str:
        text = str(exc)
        if self._password:
            for secret in {self._password, unquote(self._password)}:
                text = text.replace(secret, "***")
        return text

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a Redis call; the client has already retried; lost connections become StoreUnavailable."""
        try:
            return fn(*args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            raise StoreUnavailable(
                f"lost the Redis store {redact(self.uri)} (namespace {self.namespace!r}) "
                f"after retrying: {self._scrub(exc)}"
            ) from exc
        except RedisError as exc:
            raise StoreError(f"Redis store {redact(self.uri)} failed: {self._scrub(exc)}") from exc

    def describe(self) -> str:
        return f"{redact(self.uri)} (namespace {self.namespace!r})"

    # -- meta -----------------------------------------------------------------------------

    def _key(self, name: str) -> bytes:
        return self._prefix + name.encode("utf-8")

    def _read_meta(self) -> dict | None:
        return decode_meta(self._call(self.client.get, self._key("meta")))

    def _write_meta(self, meta: dict) -> None:
        if not self._call(self.client.set, self._key("meta"), encode_meta(meta), nx=True):
            # Another process created this namespace at the same moment: check against its meta.
            Store.open(self, self.recipe)

    # -- documents ------------------------------------------------------------------------

    def _cutoff(self, now: float) -> str:
        return f"({now - self.ttl!r}" if self.ttl else ""

    def check_and_add(self, probe: Probe, record: DocRecord) -> Reservation:
        record.doc_id = 0
        sentence_keys = list(probe.sentence_keys)
        record.sentence_keys = []
        sentences = [sentence_bucket(k) for k in sentence_keys]
        file_under = self.tables.keys(record.simhash)
        args: list[Any] = [
            self._prefix,
            self._cutoff(record.time),
            record.to_bytes(),
            repr(float(record.time)),
            self._ttl_ms,
            self._pending_ms if record.state == PENDING else 0,
            probe.nshash_n,
            probe.boilerplate_limit,
            probe.bucket_read_limit,
            f"{self._client_id}-{threading.get_ident()}",
            next(self._seq),
            _HEAD_SIZE,
            len(sentences),
            len(probe.simhash_buckets),
            len(file_under),
            *sentences,
            *probe.simhash_buckets,
            *file_under,
        ]
        reply = self._call(self._check_and_add, keys=[], args=args)
        record.doc_id = int(reply[0])
        record.sentence_keys = [sentence_keys[int(i) - 1] for i in reply[1]]
        self._remember(record.doc_id, self.buckets_of(record))
        candidates = [DocRecord.from_bytes(data) for data in reply[2:]]
        return Reservation(record.doc_id, candidates, record.sentence_keys)

    def _remember(self, doc_id: int, buckets: list[bytes]) -> None:
        self._filed[doc_id] = buckets
        while len(self._filed) > _CACHE_SIZE:
            self._filed.popitem(last=False)

    def _buckets(self, doc_id: int) -> list[bytes]:
        buckets = self._filed.pop(doc_id, None)
        if buckets is None:
            record = self.get(doc_id)
            buckets = self.buckets_of(record) if record is not None else []
        return buckets

    def remove(self, doc_id: int) -> None:
        args = [self._prefix, doc_id, _member(doc_id), *self._buckets(doc_id)]
        self._call(self._remove, keys=[], args=args)

    def commit(self, doc_id: int) -> None:
        self._filed.pop(doc_id, None)
        # the state byte is the next to last byte of the head (1-based position for Lua)
        args = [self._prefix, doc_id, _member(doc_id), _HEAD_SIZE - 1, self._ttl_ms]
        self._call(self._commit, keys=[], args=args)

    def get(self, doc_id: int) -> DocRecord | None:
        data = self._call(self.client.get, self._key(f"r:{doc_id}"))
        return None if data is None else DocRecord.from_bytes(data)

    def purge(self, older_than: float) -> int:
        """Remove documents older than ``older_than`` with their bucket entries, in batches."""
        removed = 0
        while True:
            old = self._call(
                self.client.zrangebyscore, self._key("t"), "-inf", f"({older_than!r}", start=0, num=500
            )
            if not old:
                return removed
            pipe = self.client.pipeline(transaction=False)
            for member in old:
                pipe.get(self._key(f"r:{int.from_bytes(member, 'big')}"))
            records = self._call(pipe.execute)
            pipe = self.client.pipeline(transaction=False)
            for member, data in zip(old, records):
                doc_id = int.from_bytes(member, "big")
                buckets = self.buckets_of(DocRecord.from_bytes(data)) if data is not None else []
                self._filed.pop(doc_id, None)
                self._remove(keys=[], args=[self._prefix, doc_id, member, *buckets], client=pipe)
            removed += sum(int(x) for x in self._call(pipe.execute))

    def count(self) -> int:
        args = [self._prefix, self._cutoff(time.time())]
        return int(self._call(self._count, keys=[], args=args))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.client.hdel(self._key("ops"), f"{self._client_id}-{threading.get_ident()}")
        except RedisError:
            pass  # closing after the server went away is not an error
        self.client.close()
