-- Documents of a batch found new: their status becomes 'k' (decided), their expiry that of a
-- reservation or of the store, their deadline that of a reservation (or none).
-- KEYS: marker, deadlines p, then per document its record r and kept text x.
-- ARGV: marker, then four per document: the 8-byte id, its value ('' to change only the
-- status byte; else the whole value, 'k' and the record, when its record changed), its expiry
-- in ms (0: none) and its reservation's timeout in ms (0: committed).
-- Reply, per document: 1, or 0 when its record has gone (its lease ran out, or a failover lost it).
local p = KEYS[2]
local now = server_ms()
local out = {}
for i = 0, (#KEYS - 2) / 2 - 1 do
  local r, x = KEYS[3 + 2 * i], KEYS[4 + 2 * i]
  local m, value, expire, pending = ARGV[2 + 4 * i], ARGV[3 + 4 * i], tonumber(ARGV[4 + 4 * i]), tonumber(ARGV[5 + 4 * i])
  if redis.call('EXISTS', r) == 0 then
    out[#out + 1] = 0
  else
    if value ~= '' then redis.call('SET', r, value) else redis.call('SETRANGE', r, 0, 'k') end
    if expire > 0 then
      redis.call('PEXPIRE', r, expire)
      redis.call('PEXPIRE', x, expire)
    else
      redis.call('PERSIST', r)
      redis.call('PERSIST', x)
    end
    if pending > 0 then redis.call('ZADD', p, now + pending, m) else redis.call('ZREM', p, m) end
    out[#out + 1] = 1
  end
end
return out
