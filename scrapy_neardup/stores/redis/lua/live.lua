-- Shared by check_and_add, check_and_add_many and count (prepended to them): the windows a
-- call reads, bucket reads that drop entries whose record has gone, and reaping of expired
-- reservations. ARGV[1] is the namespace's key prefix P, ARGV[2] the time-index cutoff,
-- ARGV[3] the windows to read (comma-separated, oldest first).

local P = ARGV[1]
local cutoff             -- '' or '(' .. (time - ttl): older entries of the time index go
local wins               -- windows to read, oldest first; the last is the current one
local function at_time(cut, windows)
  cutoff, wins = cut, {}
  for w in string.gmatch(windows, '[^,]+') do wins[#wins + 1] = w end
end
at_time(ARGV[2], ARGV[3])

local function member_id(m)
  local id = 0
  for i = 1, 8 do id = id * 256 + string.byte(m, i) end
  return id
end

local function id_member(id)
  local b = {}
  for i = 8, 1, -1 do b[i] = string.char(id % 256); id = math.floor(id / 256) end
  return table.concat(b)
end

-- Buckets come concatenated, one argument per list (cheaper to send than one per bucket):
-- each entry is its length, then 4 hex digits of its shard and the bucket's name.
local function entries(blob)
  local out, pos = {}, 1
  while pos <= #blob do
    local size = string.byte(blob, pos)
    out[#out + 1] = string.sub(blob, pos + 1, pos + size)
    pos = pos + size + 1
  end
  return out
end

local records = {}
local function fetch(id)
  local r = records[id]
  if r == nil then
    r = redis.call('GET', P .. 'r:' .. id)
    records[id] = r
  end
  return r
end

-- A bucket is `entry` = 4 hex digits of its shard .. its name. Values are read once per
-- script and kept here, so filing after reading costs no second HGET.
local values = {}
local function read(key, field)
  local slot = key .. '|' .. field
  local v = values[slot]
  if v == nil then
    v = redis.call('HGET', key, field)
    values[slot] = v
  end
  return v
end

local function write(key, field, v)
  values[key .. '|' .. field] = v
  if v == '' then redis.call('HDEL', key, field) else redis.call('HSET', key, field, v) end
end

-- Does document `id` (record bytes `r`) count toward a sentence's boilerplate limit? Not when
-- it is undecided: one of the batch's own before this document (the table `own`) or, given
-- `state_at` (the 1-based position of a record's state byte), a record not committed.
local function counts(id, r, own, state_at)
  return not ((own and own[id]) or (state_at and string.byte(r, state_at) ~= 0))
end

-- The ids of a bucket whose record still exists, oldest first, until `limit` of them count;
-- how many count, and how many are undecided and do not: those in the table `own` (the
-- documents of the batch checked before this one) and, given `state_at` (the 1-based position
-- of a record's state byte), those whose record is not committed (a reservation: a copy
-- another process may still take out). Ids whose record expired (ttl, pending timeout) are
-- dropped from the bucket on the way.
local function live(entry, limit, own, state_at)
  local shard, field = string.sub(entry, 1, 4), string.sub(entry, 5)
  local out, counted, undecided = {}, 0, 0
  for _, w in ipairs(wins) do
    if counted >= limit then break end
    local key = P .. 'h:' .. w .. ':' .. shard
    local v = read(key, field)
    if v then
      local kept, stale = {}, false
      for pos = 1, #v, 8 do
        if counted >= limit then
          kept[#kept + 1] = string.sub(v, pos)
          break
        end
        local m = string.sub(v, pos, pos + 7)
        local id = member_id(m)
        local r = fetch(id)
        if r then
          kept[#kept + 1] = m
          out[#out + 1] = id
          if counts(id, r, own, state_at) then
            counted = counted + 1
          else
            undecided = undecided + 1
          end
        else
          stale = true
        end
      end
      if stale then write(key, field, table.concat(kept)) end
    end
  end
  return out, counted, undecided
end

-- Forget pending reservations whose deadline passed (their process died or hung).
local function reap()
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local expired = redis.call('ZRANGEBYSCORE', P .. 'p', '-inf', now_ms, 'LIMIT', 0, 100)
  for _, m in ipairs(expired) do
    redis.call('DEL', P .. 'r:' .. member_id(m), P .. 'x:' .. member_id(m))
    redis.call('ZREM', P .. 't', m)
    redis.call('ZREM', P .. 'p', m)
  end
  if cutoff ~= '' then redis.call('ZREMRANGEBYSCORE', P .. 't', '-inf', cutoff) end
  return now_ms
end
