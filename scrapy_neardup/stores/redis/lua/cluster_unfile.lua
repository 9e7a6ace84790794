-- Takes ids out of buckets of this slot (a duplicate, a removed or purged document, an id
-- whose record has gone). KEYS: marker, then the shard hashes used. ARGV: marker, then the
-- operations, concatenated: for each, one byte for the index of its hash in KEYS, the 8-byte
-- id, one byte for the length of the bucket's name, and the name.
-- Returns how many ids were taken out (0 for one already out: a retried call).
local ops, removed, pos = ARGV[2], 0, 1
while pos <= #ops do
  local key, m = KEYS[string.byte(ops, pos)], string.sub(ops, pos + 1, pos + 8)
  local size = string.byte(ops, pos + 9)
  local field = string.sub(ops, pos + 10, pos + 9 + size)
  pos = pos + 10 + size
  local v = redis.call('HGET', key, field)
  local at = v and position(v, m)
  if at then
    v = string.sub(v, 1, at - 1) .. string.sub(v, at + 8)
    if v == '' then redis.call('HDEL', key, field) else redis.call('HSET', key, field, v) end
    removed = removed + 1
  end
end
return removed
