-- The records of a batch that live in this slot, written before they are filed under any
-- bucket, so that whoever finds an id in a bucket finds its record (or knows it is gone).
-- KEYS: marker, time index t, deadlines p, then per document its record r and kept text x.
-- ARGV: marker, time-index cutoff ('' none), lease in ms, then per document: the value
-- (status byte 'u' and the record), the compressed text ('' none), the time, the 8-byte id.
-- A document undecided when its lease ends (its process died) vanishes: p holds each
-- document's deadline, and documents past it leave the time index (their keys expire).
local t, p, cutoff, lease = KEYS[2], KEYS[3], ARGV[2], tonumber(ARGV[3])
local now = server_ms()
local expired = redis.call('ZRANGEBYSCORE', p, '-inf', now, 'LIMIT', 0, 100)
for _, m in ipairs(expired) do
  redis.call('ZREM', t, m)
  redis.call('ZREM', p, m)
end
if cutoff ~= '' then redis.call('ZREMRANGEBYSCORE', t, '-inf', cutoff) end
for i = 0, (#KEYS - 3) / 2 - 1 do
  local r, x = KEYS[4 + 2 * i], KEYS[5 + 2 * i]
  local value, text, score, m = ARGV[4 + 4 * i], ARGV[5 + 4 * i], ARGV[6 + 4 * i], ARGV[7 + 4 * i]
  redis.call('SET', r, value, 'PX', lease)
  if text ~= '' then redis.call('SET', x, text, 'PX', lease) end
  redis.call('ZADD', t, score, m)
  redis.call('ZADD', p, now + lease, m)
end
return 1
