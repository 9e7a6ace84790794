-- One document's check-and-add (needs live.lua before it), as a function of its arguments
-- (one call's ARGV, 19 of them, listed below), of whether to reap first (a batch reaps once:
-- its documents share one moment) and of `batch`: nil for a call of its own, which keeps its
-- answer in `ops`; in a batch, the batch does (see check_and_add_many.lua) and passes false,
-- or {id, filed} of the answer to give again, and `own`: the ids of the batch's documents
-- before this one (a table id -> true), which do not count toward the boilerplate limit.
-- Reply: {id, filed sentence-key positions, candidate records...}.

local reaped_at
local function check(a, first, batch, own)
  at_time(a[2], a[3])                   -- a[1] is P; cutoff and windows as in live.lua
  local rec = a[4]                      -- DocRecord bytes, doc id 0 and no sentence keys
  local score = a[5]                    -- the document's time
  local ttl_ms = tonumber(a[6])         -- record expiry; 0: kept until purged
  local window_ms = tonumber(a[7])      -- expiry of the current window's keys; 0: none
  local pending_ms = tonumber(a[8])     -- 0: committed at once
  local n = tonumber(a[9])              -- sentence keys to file at most (of 2n looked up)
  local boilerplate = tonumber(a[10])   -- a sentence bucket this full is boilerplate
  local read_limit = tonumber(a[11])    -- ids read from one SimHash bucket
  local client, seq = a[12], a[13]
  local head = tonumber(a[14])
  local mark = a[18]                    -- the namespace's marker, as found at open
  local text = a[19]                    -- the compressed text to keep beside it; '': none
  local sentences = entries(a[15])      -- sentence buckets, longest sentence first
  local reads = entries(a[16])          -- SimHash buckets to read
  local files = entries(a[17])          -- SimHash buckets to file the document under

  if first then
    assert_mark(P, mark)
    reaped_at = reap()
  end
  local now_ms = reaped_at

  local candidates, seen = {}, {}
  local function add(ids, below)
    for _, id in ipairs(ids) do
      if not seen[id] and (below == nil or id < below) then
        seen[id] = true
        candidates[#candidates + 1] = id
      end
    end
  end

  local function reply(id, filed)
    local out = {id, filed}
    for _, c in ipairs(candidates) do
      local r = fetch(c)
      if r then out[#out + 1] = r end
    end
    return out
  end

  -- A retry of a call that was applied but whose answer was lost: answer it again, with the
  -- candidates filed before the document.
  local done_id, done_filed
  if batch == nil then
    local done = redis.call('HGET', P .. 'ops', client)
    if done then
      local dseq, did, dfiled = string.match(done, '^([^:]*):([^:]*):(.*)$')
      if dseq == seq then done_id, done_filed = did, dfiled end
    end
  elseif batch then
    done_id, done_filed = batch[1], batch[2]
  end
  if done_id then
    local id = tonumber(done_id)
    local filed = {}
    for i in string.gmatch(done_filed, '%d+') do filed[#filed + 1] = tonumber(i) end
    for i = 1, #sentences do
      local older, counted = {}, 0
      for _, other in ipairs(live(sentences[i], boilerplate, own, head - 1)) do
        if other < id then
          older[#older + 1] = other
          if counts(other, fetch(other), own, head - 1) then counted = counted + 1 end
        end
      end
      if counted < boilerplate then add(older) end
    end
    for _, entry in ipairs(reads) do add(live(entry, read_limit + 1), id) end
    return reply(id, filed)
  end

  -- Every sentence key is looked up (a cut or edited reprint may have lost some of the
  -- original's longest sentences); the first n that are not boilerplate are filed. Only
  -- committed documents make a sentence boilerplate: the batch's own before this one and
  -- reservations are undecided, and may be copies of one story on their way out that would
  -- hide its first copy. A bucket already holding `boilerplate` undecided ones is evidence but
  -- takes no more documents, so it never grows past twice the limit.
  local filed = {}
  for i = 1, #sentences do
    local members, counted, undecided = live(sentences[i], boilerplate, own, head - 1)
    if counted < boilerplate then   -- else boilerplate: neither key nor evidence
      if #filed < n and undecided < boilerplate then filed[#filed + 1] = i end
      add(members)
    end
  end
  for _, entry in ipairs(reads) do add((live(entry, read_limit))) end  -- its first result only

  local id = redis.call('INCR', P .. 'n')
  local m = id_member(id)
  local keys = {}
  for _, i in ipairs(filed) do keys[#keys + 1] = string.reverse(string.sub(sentences[i], -8)) end
  local body = string.reverse(m) .. string.sub(rec, 9, head - 1) .. string.char(#filed)
    .. table.concat(keys) .. string.sub(rec, head + 1)
  local expire = ttl_ms
  if pending_ms > 0 then expire = pending_ms end
  if expire > 0 then
    redis.call('SET', P .. 'r:' .. id, body, 'PX', expire)
    if text ~= '' then redis.call('SET', P .. 'x:' .. id, text, 'PX', expire) end
  else
    redis.call('SET', P .. 'r:' .. id, body)
    if text ~= '' then redis.call('SET', P .. 'x:' .. id, text) end
  end

  local current = wins[#wins]
  local touched = {}
  local function file(entry)
    local key = P .. 'h:' .. current .. ':' .. string.sub(entry, 1, 4)
    local field = string.sub(entry, 5)
    write(key, field, (read(key, field) or '') .. m)
    touched[key] = true
  end
  for _, i in ipairs(filed) do file(sentences[i]) end
  for _, entry in ipairs(files) do file(entry) end
  if window_ms > 0 then
    for key in pairs(touched) do redis.call('PEXPIRE', key, window_ms) end
  end
  redis.call('ZADD', P .. 't', score, m)
  if pending_ms > 0 then redis.call('ZADD', P .. 'p', now_ms + pending_ms, m) end
  if batch == nil then
    redis.call('HSET', P .. 'ops', client, seq .. ':' .. id .. ':' .. table.concat(filed, ','))
    redis.call('PEXPIRE', P .. 'ops', 3600000)
  end
  return reply(id, filed)
end
