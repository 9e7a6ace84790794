-- Prepended to every script. The namespace's marker (P mark) is written when the namespace is
-- created, and each process passes the one it found at open: when the key is gone or holds
-- another, Redis lost the namespace's data (restarted without persistence, flushed, evicted)
-- and the script stops before it reads or writes anything.
local function assert_mark(P, mark)
  if redis.call('GET', P .. 'mark') ~= mark then
    error({err = 'NEARDUP_STORE_LOST the namespace marker ' .. P .. 'mark is gone or another'})
  end
end
