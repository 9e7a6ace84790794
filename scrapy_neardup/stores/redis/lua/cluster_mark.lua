-- Prepended to every cluster script. KEYS[1] is the marker of the slot the call works in (the
-- namespace's marker, written in every slot when the namespace is created) and ARGV[1] the
-- marker the process found at open: when the key is gone or holds another, the master serving
-- this slot lost its data (restarted without persistence, flushed) and the script stops
-- before it reads or writes anything. Every key a script touches is in KEYS, in KEYS[1]'s slot.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  error({err = 'NEARDUP_STORE_LOST the marker ' .. KEYS[1] .. ' is gone or another'})
end

local function server_ms()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end

-- The 1-based position of the 8-byte member m among the ids of v, or nil.
local function position(v, m)
  local at = 1
  while true do
    local found = string.find(v, m, at, true)
    if not found then return nil end
    if (found - 1) % 8 == 0 then return found end
    at = found + 1
  end
end
