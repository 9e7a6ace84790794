-- Documents in the store, after reaping expired reservations and documents older than the
-- cutoff (needs mark.lua and live.lua before it; ARGV as live.lua lists them, then the
-- namespace's marker).
assert_mark(P, ARGV[4])
reap()
return redis.call('ZCARD', P .. 't')
