-- Documents out of this slot: record, kept text, time-index and deadline entries (their
-- bucket entries go with cluster_unfile.lua). KEYS: marker, time index t, deadlines p, then
-- per document its record r, kept text x and the claim on it c. ARGV: marker, then two per
-- document: the 8-byte id, and the id of a document whose claim on it goes too ('' none).
-- Reply, per document: 1 when its record existed.
local t, p = KEYS[2], KEYS[3]
local out = {}
for i = 0, (#KEYS - 3) / 3 - 1 do
  local r, x, c = KEYS[4 + 3 * i], KEYS[5 + 3 * i], KEYS[6 + 3 * i]
  local m, holder = ARGV[2 + 2 * i], ARGV[3 + 2 * i]
  out[#out + 1] = redis.call('DEL', r)
  redis.call('DEL', x)
  redis.call('ZREM', t, m)
  redis.call('ZREM', p, m)
  if holder ~= '' and redis.call('GET', c) == holder then redis.call('DEL', c) end
end
return out
