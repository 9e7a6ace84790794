-- A pending document becomes committed: out of the pending set, its state byte set to 0,
-- its expiry set to the store's TTL (or none). Returns 1, or 0 when the record has gone.
-- ARGV: P, doc id, 8-byte member, 1-based position of the state byte, TTL in ms (0: none),
-- the namespace's marker (mark.lua comes before this).
local P, id, m = ARGV[1], ARGV[2], ARGV[3]
local state, ttl_ms = tonumber(ARGV[4]), tonumber(ARGV[5])   -- state: 1-based byte position
assert_mark(P, ARGV[6])
redis.call('ZREM', P .. 'p', m)
local key = P .. 'r:' .. id
local rec = redis.call('GET', key)
if not rec then return 0 end
if string.byte(rec, state) ~= 0 then
  rec = string.sub(rec, 1, state - 1) .. '\0' .. string.sub(rec, state + 1)
  if ttl_ms > 0 then redis.call('SET', key, rec, 'PX', ttl_ms) else redis.call('SET', key, rec) end
end
return 1
