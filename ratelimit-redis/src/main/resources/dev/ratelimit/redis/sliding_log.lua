-- SLIDING_LOG: one entry per accepted unit, scored by its time; the units in (t - W, t] count.
-- Twin of SlidingLog.java. keys[1]: the log (a sorted set); keys[2]: the sequence that names entries.
local function sliding_log(keys, t, c, window, limit, burst, apply)
  local log, seq = keys[1], keys[2]
  local live = '(' .. int(t - window)
  local n = redis.call('ZCOUNT', log, live, '+inf')
  if n + c <= limit then
    if apply then
      redis.call('ZREMRANGEBYSCORE', log, '-inf', int(t - window))
      local last = redis.call('INCRBY', seq, c)
      local entries = {}
      for id = last - c + 1, last do
        entries[#entries + 1] = int(t)
        entries[#entries + 1] = int(id)
        if #entries == 512 or id == last then
          redis.call('ZADD', log, unpack(entries))
          entries = {}
        end
      end
      n = n + c
    end
    local reset_after = 0
    if n > 0 then
      local newest = tonumber(redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')[2])
      reset_after = newest + window - t
      if apply then
        redis.call('PEXPIRE', log, ttl_ms(reset_after))
        redis.call('PEXPIRE', seq, ttl_ms(reset_after))
      end
    end
    return 1, limit - n, 0, reset_after, 0
  end
  local need = n + c - limit -- 1 <= need <= n because c <= limit
  local oldest = redis.call('ZRANGEBYSCORE', log, live, '+inf', 'WITHSCORES', 'LIMIT', need - 1, 1)
  local retry_after = tonumber(oldest[2]) + window - t
  local newest = tonumber(redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')[2])
  return 0, math.max(0, limit - n), retry_after, newest + window - t, 0
end

-- The state as StateSnapshots reads it: the timestamps of the units in the window, oldest first;
-- nil for a log too long to send.
local function sliding_log_state(keys, t, window, limit, burst)
  local entries = redis.call('ZRANGEBYSCORE', keys[1], '(' .. int(t - window), '+inf', 'WITHSCORES', 'LIMIT', 0, 257)
  if #entries > 512 then
    return nil
  end
  local times = {}
  for i = 2, #entries, 2 do
    times[#times + 1] = tonumber(entries[i])
  end
  return times
end
