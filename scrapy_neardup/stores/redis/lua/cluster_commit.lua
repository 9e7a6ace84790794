-- A pending document becomes committed: out of the deadlines, its state byte set to 0, its
-- expiry (and its kept text's) set to the store's TTL (or none). Returns 1, or 0 when the
-- record has gone. KEYS: marker, deadlines p, record r, kept text x. ARGV: marker, 8-byte id,
-- 1-based position of the state byte in the value, TTL in ms (0: none).
local p, r, x = KEYS[2], KEYS[3], KEYS[4]
local m, state, ttl_ms = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREM', p, m)
local value = redis.call('GET', r)
if not value then return 0 end
if string.byte(value, state) ~= 0 then
  redis.call('SET', r, string.sub(value, 1, state - 1) .. '\0' .. string.sub(value, state + 1), 'KEEPTTL')
end
if ttl_ms > 0 then
  redis.call('PEXPIRE', r, ttl_ms)
  redis.call('PEXPIRE', x, ttl_ms)
else
  redis.call('PERSIST', r)
  redis.call('PERSIST', x)
end
return 1
