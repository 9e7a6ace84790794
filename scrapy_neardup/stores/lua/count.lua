-- Documents in the store, after reaping expired reservations and documents older than the
-- cutoff (needs live.lua before it; ARGV as live.lua lists them).
reap()
return redis.call('ZCARD', P .. 't')
