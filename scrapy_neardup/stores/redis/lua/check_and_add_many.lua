-- Several documents in one call, one after the other: ARGV holds their argument lists back
-- to back (19 each, as check.lua lists them), and the reply is the list of their replies.
-- The batch is named by its first document's client and sequence number; `ops` keeps each
-- document's id and filed keys, so that a retry of a batch whose answer was lost gives the
-- same answer again. Each document is checked with the ids of those before it as the batch's
-- own (see check.lua). mark.lua, live.lua and check.lua come before this.
local ARGS = 19  -- arguments of one document (RedisStore._check_args)
local client, seq = ARGV[12], ARGV[13]
local again = {}
local done = redis.call('HGET', P .. 'ops', client)
if done then
  local dseq, answers = string.match(done, '^B([^:]*):(.*)$')
  if dseq == seq then
    for id, filed in string.gmatch(answers, '(%d+)/([%d,]*);') do again[#again + 1] = {id, filed} end
  end
end
local out, log, own = {}, {}, {}
for base = 0, #ARGV - ARGS, ARGS do
  local answer = check({unpack(ARGV, base + 1, base + ARGS)}, base == 0, again[#out + 1] or false, own)
  own[tonumber(answer[1])] = true
  out[#out + 1] = answer
  log[#log + 1] = answer[1] .. '/' .. table.concat(answer[2], ',') .. ';'
end
redis.call('HSET', P .. 'ops', client, 'B' .. seq .. ':' .. table.concat(log))
redis.call('PEXPIRE', P .. 'ops', 3600000)
return out
