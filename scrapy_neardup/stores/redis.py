"""``redis://host:port/db``: the store shared by several crawler processes or machines.

Check-and-add is one Lua script, so it is atomic across processes and costs one round
trip: it reads the candidate buckets, takes a document id and files the new document
before any other client can read those buckets. Of two processes racing on two copies of
one story, the second always sees the first. Verification stays on the client, against
the candidate records the script returns.

Layout of a namespace (``P`` = ``neardup:{namespace}:``; the braces make the namespace a
Redis Cluster hash tag, so all keys of a namespace live in one slot)::

    P meta             string  format version, recipe and layout (JSON)
    P n                string  last document id (INCR)
    P r:<id>           string  document record (DocRecord bytes); PX ttl, or PX pending_timeout
    P h:<window>:<sh>  hash    bucket name -> 8-byte big-endian ids, oldest first
    P t                zset    time index: every stored id scored by document time (purge, count)
    P p                zset    pending ids scored by their deadline (server ms)
    P ops              hash    client -> its last check-and-add, so a retried call is not applied twice

Buckets are fields of 65,536 shard hashes rather than keys of their own: a document is
filed under 15 buckets, nearly all of which hold only that document, and a key costs Redis
over 100 bytes while a field of a small (listpack) hash costs about 25. This cuts memory
per document by more than half.

Bounded growth: with a ``ttl`` the shard hashes are cut into time windows of ``ttl / 4``;
a document is filed in the window of its time and a lookup reads the windows that overlap
the last ``ttl`` seconds. A window's keys expire ``ttl`` after the window ends, and records
expire ``ttl`` after they are written, so a long-running crawl keeps at most 1.25 ``ttl`` of
documents. Without ``ttl`` there is one window and nothing expires (``purge`` still works).
A pending reservation of a process that died expires after ``pending_timeout``; bucket
entries whose record has gone are dropped when a script reads them, so they never count as
candidates or boilerplate.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import OrderedDict
from itertools import count
from typing import Any, Callable, TypeVar
from urllib.parse import unquote, unquote_plus, urlsplit

import redis
import xxhash
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from ..fingerprint import Recipe
from ..record import _HEAD, PENDING, DocRecord
from . import redact
from .base import (
    Confirm,
    Probe,
    Reservation,
    Store,
    StoreError,
    StoreFormatError,
    StoreUnavailable,
    decode_meta,
    encode_meta,
    sentence_bucket,
)

T = TypeVar("T")

# Byte layout the script edits: the id is the first 8 bytes (little-endian); the state and
# the number of sentence keys are the last two bytes of the head; the keys follow it.
_HEAD_SIZE = _HEAD.size

SHARDS = 1 << 16  # bucket shard hashes per window (4 hex digits)
WINDOWS_PER_TTL = 4  # a TTL window is ttl / 4: documents are kept 1.25 ttl at most

DEFAULT_PARAMS: dict[str, Any] = {
    "socket_timeout": 10,
    "socket_connect_timeout": 5,
    "retry_on_timeout": True,
    "health_check_interval": 30,
    # One connection per store, kept: no pool checkout and release around every call (about
    # 15% of a check's client CPU); calls from several threads take turns on it.
    "single_connection_client": True,
}

_CACHE_SIZE = 4096  # buckets of recent reservations, so remove() needs no read first

_LIVE = """
local P = ARGV[1]
local cutoff             -- '' or '(' .. (time - ttl): older entries of the time index go
local wins               -- windows to read, oldest first; the last is the current one
local function at_time(cut, windows)
  cutoff, wins = cut, {}
  for w in string.gmatch(windows, '[^,]+') do wins[#wins + 1] = w end
end
at_time(ARGV[2], ARGV[3])

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

-- A bucket is `entry` = 4 hex digits of its shard .. its name. Values are read once per
-- script and kept here, so filing after reading costs no second HGET.
local values = {}
local function read(key, field)
  local slot = key .. '|' .. field
  local v = values[slot]
  if v == nil then
    v = redis.call('HGET', key, field)
    values[slot] = v
  end
  return v
end

local function write(key, field, v)
  values[key .. '|' .. field] = v
  if v == '' then redis.call('HDEL', key, field) else redis.call('HSET', key, field, v) end
end

-- Up to `limit` ids of a bucket whose record still exists, oldest first. Ids whose record
-- expired (ttl, pending timeout) are dropped from the bucket on the way.
local function live(entry, limit)
  local shard, field = string.sub(entry, 1, 4), string.sub(entry, 5)
  local out = {}
  for _, w in ipairs(wins) do
    if #out >= limit then break end
    local key = P .. 'h:' .. w .. ':' .. shard
    local v = read(key, field)
    if v then
      local kept, stale = {}, false
      for pos = 1, #v, 8 do
        if #out >= limit then
          kept[#kept + 1] = string.sub(v, pos)
          break
        end
        local m = string.sub(v, pos, pos + 7)
        local id = member_id(m)
        if fetch(id) then
          kept[#kept + 1] = m
          out[#out + 1] = id
        else
          stale = true
        end
      end
      if stale then write(key, field, table.concat(kept)) end
    end
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

# One document's check-and-add, a function of its arguments (one call's ARGV), of whether to
# reap first (a batch reaps once: its documents share one moment) and of ``batch``: nil for a
# call of its own, which keeps its answer in ``ops``; in a batch, the batch does (see below)
# and passes false, or {id, filed} of the answer to give again.
_CHECK = _LIVE + """
local reaped_at
local function check(a, first, batch)
  at_time(a[2], a[3])
  local rec = a[4]                      -- DocRecord bytes, doc id 0 and no sentence keys
  local score = a[5]                    -- the document's time
  local ttl_ms = tonumber(a[6])         -- record expiry; 0: kept until purged
  local window_ms = tonumber(a[7])      -- expiry of the current window's keys; 0: none
  local pending_ms = tonumber(a[8])     -- 0: committed at once
  local n = tonumber(a[9])              -- sentence keys to file at most (of 2n looked up)
  local boilerplate = tonumber(a[10])   -- a sentence bucket this full is boilerplate
  local read_limit = tonumber(a[11])    -- ids read from one SimHash bucket
  local client, seq = a[12], a[13]
  local head = tonumber(a[14])
  -- Buckets come concatenated, one argument per list (cheaper to send than one per bucket):
  -- each entry is its length, then 4 hex digits of its shard and the bucket's name.
  local function entries(blob)
    local out, pos = {}, 1
    while pos <= #blob do
      local size = string.byte(blob, pos)
      out[#out + 1] = string.sub(blob, pos + 1, pos + size)
      pos = pos + size + 1
    end
    return out
  end
  local sentences = entries(a[15])      -- sentence buckets, longest sentence first
  local reads = entries(a[16])          -- SimHash buckets to read
  local files = entries(a[17])          -- SimHash buckets to file the document under

  if first then reaped_at = reap() end
  local now_ms = reaped_at

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

  -- A retry of a call that was applied but whose answer was lost: answer it again, with the
  -- candidates filed before the document.
  local done_id, done_filed
  if batch == nil then
    local done = redis.call('HGET', P .. 'ops', client)
    if done then
      local dseq, did, dfiled = string.match(done, '^([^:]*):([^:]*):(.*)$')
      if dseq == seq then done_id, done_filed = did, dfiled end
    end
  elseif batch then
    done_id, done_filed = batch[1], batch[2]
  end
  if done_id then
    local id = tonumber(done_id)
    local filed = {}
    for i in string.gmatch(done_filed, '%d+') do filed[#filed + 1] = tonumber(i) end
    for i = 1, #sentences do
      local older = {}
      for _, other in ipairs(live(sentences[i], boilerplate + 1)) do
        if other < id then older[#older + 1] = other end
      end
      if #older < boilerplate then add(older) end
    end
    for _, entry in ipairs(reads) do add(live(entry, read_limit + 1), id) end
    return reply(id, filed)
  end

  -- Every sentence key is looked up (a cut or edited reprint may have lost some of the
  -- original's longest sentences); the first n that are not boilerplate are filed.
  local filed = {}
  for i = 1, #sentences do
    local members = live(sentences[i], boilerplate)
    if #members < boilerplate then   -- else boilerplate: neither key nor evidence
      if #filed < n then filed[#filed + 1] = i end
      add(members)
    end
  end
  for _, entry in ipairs(reads) do add(live(entry, read_limit)) end

  local id = redis.call('INCR', P .. 'n')
  local m = id_member(id)
  local keys = {}
  for _, i in ipairs(filed) do keys[#keys + 1] = string.reverse(string.sub(sentences[i], -8)) end
  local body = string.reverse(m) .. string.sub(rec, 9, head - 1) .. string.char(#filed)
    .. table.concat(keys) .. string.sub(rec, head + 1)
  local expire = ttl_ms
  if pending_ms > 0 then expire = pending_ms end
  if expire > 0 then
    redis.call('SET', P .. 'r:' .. id, body, 'PX', expire)
  else
    redis.call('SET', P .. 'r:' .. id, body)
  end

  local current = wins[#wins]
  local touched = {}
  local function file(entry)
    local key = P .. 'h:' .. current .. ':' .. string.sub(entry, 1, 4)
    local field = string.sub(entry, 5)
    write(key, field, (read(key, field) or '') .. m)
    touched[key] = true
  end
  for _, i in ipairs(filed) do file(sentences[i]) end
  for _, entry in ipairs(files) do file(entry) end
  if window_ms > 0 then
    for key in pairs(touched) do redis.call('PEXPIRE', key, window_ms) end
  end
  redis.call('ZADD', P .. 't', score, m)
  if pending_ms > 0 then redis.call('ZADD', P .. 'p', now_ms + pending_ms, m) end
  if batch == nil then
    redis.call('HSET', P .. 'ops', client, seq .. ':' .. id .. ':' .. table.concat(filed, ','))
    redis.call('PEXPIRE', P .. 'ops', 3600000)
  end
  return reply(id, filed)
end
"""

CHECK_AND_ADD = _CHECK + "return check(ARGV, true)"

# Several documents in one call, one after the other: ARGV holds their argument lists back to
# back, and the reply is the list of their replies. The batch is named by its first
# document's client and sequence number; ``ops`` keeps each document's id and filed keys, so
# that a retry of a batch whose answer was lost gives the same answer again.
_CHECK_ARGS = 17  # arguments of one document
CHECK_AND_ADD_MANY = _CHECK + f"""
local client, seq = ARGV[12], ARGV[13]
local again = {{}}
local done = redis.call('HGET', P .. 'ops', client)
if done then
  local dseq, answers = string.match(done, '^B([^:]*):(.*)$')
  if dseq == seq then
    for id, filed in string.gmatch(answers, '(%d+)/([%d,]*);') do again[#again + 1] = {{id, filed}} end
  end
end
local out, log = {{}}, {{}}
for base = 0, #ARGV - {_CHECK_ARGS}, {_CHECK_ARGS} do
  local answer = check({{unpack(ARGV, base + 1, base + {_CHECK_ARGS})}}, base == 0, again[#out + 1] or false)
  out[#out + 1] = answer
  log[#log + 1] = answer[1] .. '/' .. table.concat(answer[2], ',') .. ';'
end
redis.call('HSET', P .. 'ops', client, 'B' .. seq .. ':' .. table.concat(log))
redis.call('PEXPIRE', P .. 'ops', 3600000)
return out
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
local P, id, m, window, blob = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local existed = redis.call('DEL', P .. 'r:' .. id)
redis.call('ZREM', P .. 't', m)
redis.call('ZREM', P .. 'p', m)
local pos = 1
while pos <= #blob do              -- bucket entries as check-and-add takes them
  local size = string.byte(blob, pos)
  local key = P .. 'h:' .. window .. ':' .. string.sub(blob, pos + 1, pos + 4)
  local field = string.sub(blob, pos + 5, pos + size)
  pos = pos + size + 1
  local v = redis.call('HGET', key, field)
  if v then
    local kept = {}
    for pos = 1, #v, 8 do
      local other = string.sub(v, pos, pos + 7)
      if other ~= m then kept[#kept + 1] = other end
    end
    if #kept == 0 then redis.call('HDEL', key, field) else redis.call('HSET', key, field, table.concat(kept)) end
  end
end
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


def _secrets(uri: str) -> list[str]:
    """The passwords a URI holds, as written and decoded, longest first (to scrub messages)."""
    parts = urlsplit(uri)
    found = {parts.password or ""}
    for param in parts.query.split("&"):
        name, _, value = param.partition("=")
        if any(word in unquote(name).lower() for word in ("pass", "secret", "token")):
            found.add(value)
    found |= {unquote(s) for s in found} | {unquote_plus(s) for s in found}
    return sorted(found - {""}, key=len, reverse=True)


def _member(doc_id: int) -> bytes:
    return doc_id.to_bytes(8, "big")


def _entry(bucket: bytes) -> bytes:
    """A bucket as the scripts take it: its length, the 4 hex digits of its shard, its name."""
    return b"%c%04x%s" % (len(bucket) + 4, xxhash.xxh32_intdigest(bucket) % SHARDS, bucket)


class RedisStore(Store):
    """A namespace of a Redis server, shared by every process that opens the same URI.

    ``ttl`` (seconds) bounds the store: it is part of the store's layout, fixed when the
    namespace is created, so every process sharing a namespace gives the same one or none
    (None takes the store's own; a store created without one keeps documents until purged).
    ``pending_timeout``: how long a reservation (``reserve=True``) waits for :meth:`commit`
    before it vanishes.
    ``retries``: how often a command is retried after a lost connection or a timeout.
    ``redis_params``: extra ``redis.Redis`` arguments (timeouts, TLS files, ...).
    """

    files_before_verifying = True

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
        self._batch: Any = None  # the connection of start_check_and_add_many
        self._sent = count(1)  # batches sent on it
        self._unread = 0  # the batch sent on it whose answer is not read yet (0: none)
        self._to_remove: list[int] = []  # documents to take out with the next call (remove_later)
        self._closed = False
        netloc = urlsplit(uri).netloc
        if netloc and "@" in uri.partition("://")[2][len(netloc) :]:
            raise StoreUnavailable(
                f"bad Redis store URI {redact(uri)}: an '@' follows its host, so its password holds "
                "a raw '#', '/', '?' or '@': write them percent-encoded (%23, %2F, %3F, %40, and "
                "'%' as %25), or give the password in NEARDUP_REDIS_PARAMS ({'password': ...})"
            )
        try:
            self.client = get_redis(uri, {"retries": retries, **(redis_params or {})})
        except (ValueError, RedisError) as exc:
            raise StoreUnavailable(f"bad Redis store URI {redact(uri)}: {self._scrub(exc)}") from exc
        self._check_and_add = self.client.register_script(CHECK_AND_ADD)
        self._check_and_add_many = self.client.register_script(CHECK_AND_ADD_MANY)
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

    def _set_ttl(self, ttl: float | None) -> None:
        self.ttl = float(ttl) if ttl else None
        self._ttl_ms = math.ceil(self.ttl * 1000) if self.ttl else 0
        self._window = self.ttl / WINDOWS_PER_TTL if self.ttl else 0.0
        self._layout = {"shards": SHARDS, "window": self._window}

    # -- errors ---------------------------------------------------------------------------

    def _scrub(self, exc: BaseException) -> str:
        text = str(exc)
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

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
        if self._to_remove:
            self._remove_now(self._removals())
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

    def open(self, recipe: Recipe) -> None:
        super().open(recipe)
        layout = (self._read_meta() or {}).get("layout")
        if self.ttl is None and layout and layout.get("window") and layout.get("shards") == SHARDS:
            self._set_ttl(layout["window"] * WINDOWS_PER_TTL)  # no TTL given: the store's own
        if layout != self._layout:
            stored_ttl = layout["window"] * WINDOWS_PER_TTL if layout and layout.get("window") else None
            raise StoreFormatError(
                f"store {self.describe()} was created with ttl {stored_ttl!r} (layout {layout}), "
                f"this process configures ttl {self.ttl!r}: every process sharing a Redis "
                "namespace must use the same TTL; use the stored one or a new namespace"
            )

    def _read_meta(self) -> dict | None:
        return decode_meta(self._call(self.client.get, self._key("meta")))

    def _write_meta(self, meta: dict) -> None:
        meta = {**meta, "layout": self._layout}
        if not self._call(self.client.set, self._key("meta"), encode_meta(meta), nx=True):
            # Another process created this namespace at the same moment: check against its meta.
            Store.open(self, self.recipe)

    # -- documents ------------------------------------------------------------------------

    def _cutoff(self, now: float) -> str:
        return f"({now - self.ttl!r}" if self.ttl else ""

    def _window_of(self, when: float) -> bytes:
        return b"%d" % (when // self._window) if self._window else b"0"

    def _windows(self, now: float) -> bytes:
        """The windows a document of time ``now`` is compared with, oldest first."""
        if not self._window:
            return b"0"
        first, last = int((now - self.ttl) // self._window), int(now // self._window)
        return b",".join(b"%d" % w for w in range(first, last + 1))

    def check_and_add(self, probe: Probe, record: DocRecord, confirm: Confirm | None = None) -> Reservation:
        args, sentence_keys, filing = self._check_args(probe, record)
        reply = self._call(self._check_and_add, keys=[], args=args)
        return self._reserved(record, reply, sentence_keys, filing)

    def check_and_add_many(self, probes: list[Probe], records: list[DocRecord]) -> list[Reservation]:
        """:meth:`check_and_add` for several documents in one script call (one round trip).

        The script checks them one after the other, so each document sees the ones before it;
        the caller verifies them in order (see ``Detector.check_many``).
        """
        return self.start_check_and_add_many(probes, records)()

    def start_check_and_add_many(
        self, probes: list[Probe], records: list[DocRecord]
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
                self._remove_now(removals)
                replies = self._call(self._check_and_add_many, keys=[], args=every)
            return [self._reserved(*call[:1], reply, *call[1:]) for call, reply in zip(calls, replies)]

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
        read = [_entry(b) for b in probe.simhash_buckets]
        # The probe's SimHash buckets are the record's own (empty when SimHash is not a method).
        file_entries = read if probe.simhash_buckets else [_entry(b) for b in self.tables.keys(record.simhash)]
        window_ms = 0
        if self._window:
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
            _HEAD_SIZE,
            b"".join(sentences),
            b"".join(read),
            b"".join(file_entries),
        ]
        assert len(args) == _CHECK_ARGS
        return args, sentence_keys, (sentences, file_entries)

    def _reserved(self, record: DocRecord, reply: list, sentence_keys: list[int], filing: tuple) -> Reservation:
        sentences, file_entries = filing
        record.doc_id = int(reply[0])
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

    def _removals(self) -> list[list[Any]]:
        """The REMOVE script arguments of the queued documents, taken off the queue."""
        doc_ids, self._to_remove = self._to_remove, []
        removals = []
        for doc_id in doc_ids:
            where = self._filed.pop(doc_id, None) or self._where(self.get(doc_id))
            removals.append([self._prefix, doc_id, _member(doc_id), *where])
        return removals

    def _remove_now(self, removals: list[list[Any]]) -> int:
        """Run REMOVE scripts in one round trip; how many records they deleted."""
        if not removals:
            return 0
        pipe = self.client.pipeline(transaction=False)
        for args in removals:
            self._remove(keys=[], args=args, client=pipe)
        return sum(int(existed) for existed in self._call(pipe.execute))

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
            removals = []
            for member, data in zip(old, records):
                doc_id = int.from_bytes(member, "big")
                self._filed.pop(doc_id, None)
                where = self._where(DocRecord.from_bytes(data) if data is not None else None)
                removals.append([self._prefix, doc_id, member, *where])
            removed += self._remove_now(removals)

    def count(self) -> int:
        args = [self._prefix, self._cutoff(time.time()), b"0"]
        return int(self._call(self._count, keys=[], args=args))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._remove_now(self._removals())
        except StoreError:
            pass  # the server went away: they stay, as documents of their own
        try:
            self.client.hdel(self._key("ops"), f"{self._client_id}-{threading.get_ident()}")
        except RedisError:
            pass  # closing after the server went away is not an error
        if self._batch is not None:
            self._batch.disconnect()
        self.client.close()
