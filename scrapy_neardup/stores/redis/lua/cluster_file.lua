-- Files documents under buckets of this slot and reads what was there before them, in one
-- atomic step per bucket: of two documents filed under one bucket, the second sees the first.
-- KEYS: marker, then the shard hashes used. ARGV: marker, expiry of the window's keys in ms
-- (0: none), then the operations, concatenated: for each, one byte for the index of its hash
-- in KEYS, one for the boilerplate limit (0: none; a bucket holding that many ids takes no
-- more), two (big-endian) for how many ids to return at most, the 8-byte id, one byte for the
-- length of the bucket's name, and the name.
-- Reply, per operation: {1 if filed, the ids that were there before it, oldest first}. An id
-- filed already (a retried call) is not filed twice, and the ids before it are returned.
local expire, ops = tonumber(ARGV[2]), ARGV[3]
local out, values = {}, {}
local pos = 1
while pos <= #ops do
  local key = KEYS[string.byte(ops, pos)]
  local limit = string.byte(ops, pos + 1)
  local cap = string.byte(ops, pos + 2) * 256 + string.byte(ops, pos + 3)
  local m = string.sub(ops, pos + 4, pos + 11)
  local size = string.byte(ops, pos + 12)
  local field = string.sub(ops, pos + 13, pos + 12 + size)
  pos = pos + 13 + size
  local slot = key .. '|' .. field
  local v = values[slot]
  if v == nil then v = redis.call('HGET', key, field) or '' end
  local before, filed = v, 0
  local at = position(v, m)
  if at then
    before, filed = string.sub(v, 1, at - 1), 1
  elseif limit == 0 or #v / 8 < limit then
    v = v .. m
    redis.call('HSET', key, field, v)
    if expire > 0 then redis.call('PEXPIRE', key, expire) end
    filed = 1
  end
  values[slot] = v
  out[#out + 1] = {filed, string.sub(before, 1, cap * 8)}
end
return out
