-- A document out of the store, as a function (remove.lua, and commit.lua and replace.lua for
-- the copy a document replaces): its record and kept text, its time-index and pending entries, and its id
-- in each bucket it was filed under. `window` is the window it was filed in, `blob` its
-- bucket entries as check-and-add takes them. Returns 1 when the record existed.
local function drop(P, id, m, window, blob)
  local existed = redis.call('DEL', P .. 'r:' .. id)
  redis.call('DEL', P .. 'x:' .. id)
  redis.call('ZREM', P .. 't', m)
  redis.call('ZREM', P .. 'p', m)
  local pos = 1
  while pos <= #blob do
    local size = string.byte(blob, pos)
    local key = P .. 'h:' .. window .. ':' .. string.sub(blob, pos + 1, pos + 4)
    local field = string.sub(blob, pos + 5, pos + size)
    pos = pos + size + 1
    local v = redis.call('HGET', key, field)
    if v then
      local kept = {}
      for at = 1, #v, 8 do
        local other = string.sub(v, at, at + 7)
        if other ~= m then kept[#kept + 1] = other end
      end
      if #kept == 0 then redis.call('HDEL', key, field) else redis.call('HSET', key, field, table.concat(kept)) end
    end
  end
  return existed
end
