-- Ids for a batch: KEYS[2] is the namespace's counter (in the control slot), ARGV[2] how many
-- ids to take. Returns the last id taken. A retried call takes others: ids are never reused.
return redis.call('INCRBY', KEYS[2], ARGV[2])
