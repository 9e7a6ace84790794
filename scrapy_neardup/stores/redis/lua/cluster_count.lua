-- The documents of this slot's time index, after dropping those past their deadline and those
-- older than the cutoff. KEYS: marker, time index t, deadlines p. ARGV: marker, cutoff ('' none).
local t, p, cutoff = KEYS[2], KEYS[3], ARGV[2]
local expired = redis.call('ZRANGEBYSCORE', p, '-inf', server_ms(), 'LIMIT', 0, 1000)
for _, m in ipairs(expired) do
  redis.call('ZREM', t, m)
  redis.call('ZREM', p, m)
end
if cutoff ~= '' then redis.call('ZREMRANGEBYSCORE', t, '-inf', cutoff) end
return redis.call('ZCARD', t)
