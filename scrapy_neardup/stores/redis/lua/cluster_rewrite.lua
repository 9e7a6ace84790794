-- A document's record rewritten in place (a copy that replaced another takes its story id),
-- its status byte and expiry kept. KEYS: marker, record r. ARGV: marker, the record's bytes.
-- Returns 0, or -1 when the record has gone.
local value = redis.call('GET', KEYS[2])
if not value then return -1 end
redis.call('SET', KEYS[2], string.sub(value, 1, 1) .. ARGV[2], 'KEEPTTL')
return 0
