-- A document claims a stored copy it is to replace (Store.replace), in the copy's slot; of two
-- documents claiming one copy, the first wins. KEYS: marker, the copy's record r, its claim c.
-- ARGV: marker, the claiming id, the claim's lifetime in ms (a reservation's timeout), 'claim'
-- or 'release', and the id of a claimer whose record has gone ('' none), whose claim is taken over.
-- Returns 0 when claimed (or released, or claimed already: a retried call), -1 when the copy
-- has gone, or the id of the document that claims it.
local r, c = KEYS[2], KEYS[3]
local id, lifetime, action, gone = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local holder = redis.call('GET', c)
if action == 'release' then
  if holder == id then redis.call('DEL', c) end
  return 0
end
if holder == id then return 0 end
if redis.call('EXISTS', r) == 0 then return -1 end
if holder and holder ~= gone then return tonumber(holder) end
redis.call('SET', c, id, 'PX', lifetime)
return 0
