-- Ids for a batch: KEYS[2] is the namespace's counter (in the control slot), ARGV[2] how many
-- ids to take. Returns the last id taken. A retried call takes others: ids are never reused.
-- With ARGV[3] (and ARGV[2] 0) the counter is raised to at least ARGV[3], safe to repeat: a
-- batch's ids sent again to a promoted replica that had not got them are not handed out again.
local last = redis.call('INCRBY', KEYS[2], ARGV[2])
if ARGV[3] and last < tonumber(ARGV[3]) then
  last = tonumber(ARGV[3])
  redis.call('SET', KEYS[2], last)
end
return last
