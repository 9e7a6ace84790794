-- A document out of the store: its record, its time-index and pending entries, and its id
-- in each bucket it was filed under. Returns 1 when the record existed.
-- ARGV: P, doc id, 8-byte member, its window, its bucket entries as check-and-add takes them,
-- the namespace's marker (mark.lua comes before this).
local P, id, m, window, blob = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
assert_mark(P, ARGV[6])
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
