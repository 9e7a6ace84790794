-- A pending document becomes committed: out of the pending set, its state byte set to 0,
-- its expiry (and its kept text's) set to the store's TTL (or none). A document that replaces a copy of its story
-- (replace.lua) takes that copy out in the same step. Returns 1, or 0 when the record has gone.
-- ARGV: P, doc id, 8-byte member, 1-based position of the state byte, TTL in ms (0: none),
-- the namespace's marker; for a replacing document, then the replaced copy's id, 8-byte
-- member, window and bucket entries (mark.lua and drop.lua come before this).
local P, id, m = ARGV[1], ARGV[2], ARGV[3]
local state, ttl_ms = tonumber(ARGV[4]), tonumber(ARGV[5])   -- state: 1-based byte position
assert_mark(P, ARGV[6])
redis.call('ZREM', P .. 'p', m)
local key = P .. 'r:' .. id
local rec = redis.call('GET', key)
if not rec then return 0 end
local text = P .. 'x:' .. id   -- a kept text expires with its record
if ttl_ms > 0 then redis.call('PEXPIRE', text, ttl_ms) else redis.call('PERSIST', text) end
if string.byte(rec, state) ~= 0 then
  rec = string.sub(rec, 1, state - 1) .. '\0' .. string.sub(rec, state + 1)
  if ttl_ms > 0 then redis.call('SET', key, rec, 'PX', ttl_ms) else redis.call('SET', key, rec) end
end
if ARGV[7] then
  drop(P, ARGV[7], ARGV[8], ARGV[9], ARGV[10])
  local claim = P .. 'c:' .. ARGV[7]
  if redis.call('GET', claim) == id then redis.call('DEL', claim) end
end
return 1
