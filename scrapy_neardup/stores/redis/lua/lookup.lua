-- Candidate lookup of several documents, read-only (needs mark.lua and live.lua before it):
-- the records check_and_add would return as candidates, with nothing written: no id, no
-- record, no reaping, and bucket entries whose record has gone are skipped, not dropped.
-- ARGV: P, cutoff (unused), windows, the namespace's marker, the boilerplate limit, the
-- SimHash bucket read limit, then two per document: its sentence buckets and its SimHash
-- buckets, each concatenated as check.lua takes them.
-- Reply: one list of candidate records per document.
assert_mark(P, ARGV[4])
local boilerplate = tonumber(ARGV[5])
local read_limit = tonumber(ARGV[6])

-- Up to `limit` ids of a bucket whose record exists, oldest first (live() without its clean-up).
local function existing(entry, limit)
  local shard, field = string.sub(entry, 1, 4), string.sub(entry, 5)
  local out = {}
  for _, w in ipairs(wins) do
    if #out >= limit then break end
    local v = read(P .. 'h:' .. w .. ':' .. shard, field)
    if v then
      for pos = 1, #v, 8 do
        if #out >= limit then break end
        local id = member_id(string.sub(v, pos, pos + 7))
        if fetch(id) then out[#out + 1] = id end
      end
    end
  end
  return out
end

local replies = {}
for doc = 7, #ARGV, 2 do
  local found, seen = {}, {}
  local function add(ids)
    for _, id in ipairs(ids) do
      if not seen[id] then
        seen[id] = true
        found[#found + 1] = fetch(id)
      end
    end
  end
  for _, entry in ipairs(entries(ARGV[doc])) do
    local members = existing(entry, boilerplate)
    if #members < boilerplate then add(members) end  -- else boilerplate: no evidence
  end
  for _, entry in ipairs(entries(ARGV[doc + 1])) do add(existing(entry, read_limit)) end
  replies[#replies + 1] = found
end
return replies
