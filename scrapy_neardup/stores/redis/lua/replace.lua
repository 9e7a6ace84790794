-- A filed document takes the place of a stored copy of its story (Store.replace; mark.lua and
-- drop.lua come before this). Its record, rewritten by the caller with the story's id and the
-- replaced copy's id, is written over the filed one (its expiry kept). Committed, it takes
-- the copy out at once; pending, it claims the copy (P c:<old id> -> its id, for as long as a
-- reservation lives) and commit.lua takes the copy out. Of two documents replacing one copy,
-- the first to claim it wins.
-- ARGV: P, the namespace's marker, doc id, its record, 1 if committed, pending timeout in ms,
-- then the replaced copy's id, 8-byte member, window and bucket entries.
-- Returns 0 when done (or done already: a retried call); the id of the pending document that
-- claims the copy already; -1 when the copy or the document is gone.
local P = ARGV[1]
assert_mark(P, ARGV[2])
local id, rec, committed, pending_ms = ARGV[3], ARGV[4], ARGV[5] == '1', tonumber(ARGV[6])
local old, old_m, window, blob = ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local key, claim = P .. 'r:' .. id, P .. 'c:' .. old
local holder = redis.call('GET', claim)
if holder == id then return 0 end
if redis.call('EXISTS', key) == 0 or redis.call('EXISTS', P .. 'r:' .. old) == 0 then return -1 end
if holder and redis.call('EXISTS', P .. 'r:' .. holder) == 1 then return tonumber(holder) end
local left = redis.call('PTTL', key)
if left > 0 then redis.call('SET', key, rec, 'PX', left) else redis.call('SET', key, rec) end
if committed then drop(P, old, old_m, window, blob) end
-- Committed, the claim only answers a retry of this call; pending, it holds the copy.
redis.call('SET', claim, id, 'PX', pending_ms)
return 0
