-- SLIDING_LOG's reservations, twin of SlidingLog.java's reserved, giveBack and charge.

-- Mark: the time the reservation's entries were logged at.
local function sliding_log_reserved(keys, t, window, limit, burst, ledger_key, id)
  local ledger = ledger_open(ledger_key, id, t, t + window)
  return t, 0, ledger.id
end

-- The log's keys expire with its newest entry.
local function sliding_log_expire(keys, t, window)
  local newest = redis.call('ZRANGE', keys[1], -1, -1, 'WITHSCORES')[2]
  local ms = ttl_ms(tonumber(newest) + window - t)
  redis.call('PEXPIRE', keys[1], ms)
  redis.call('PEXPIRE', keys[2], ms)
end

-- Removes up to units entries logged at the reservation's time while they are in the window.
local function sliding_log_give_back(keys, t, units, window, limit, burst, at, frac, ledger_key, id)
  if at <= t - window or not ledger_holds(ledger_read(ledger_key), id, t) then
    return
  end
  local ids = redis.call('ZRANGEBYSCORE', keys[1], int(at), int(at), 'LIMIT', 0, units)
  if #ids > 0 then
    for i = 1, #ids, 512 do
      redis.call('ZREM', keys[1], unpack(ids, i, math.min(i + 511, #ids)))
    end -- the TTLs stay: the entries left need no longer life, and Redis drops an empty log itself
  end
end

-- Logs units entries at t whatever the limit, keeping the newest limit of them.
local function sliding_log_charge(keys, t, units, window, limit, burst)
  local log, seq = keys[1], keys[2]
  redis.call('ZREMRANGEBYSCORE', log, '-inf', int(t - window))
  local added = math.min(units, limit)
  local over = redis.call('ZCARD', log) + added - limit
  if over > 0 then
    redis.call('ZREMRANGEBYRANK', log, 0, over - 1)
  end
  local last = redis.call('INCRBY', seq, added)
  local entries = {}
  for entry = last - added + 1, last do
    entries[#entries + 1] = int(t)
    entries[#entries + 1] = int(entry)
    if #entries == 512 or entry == last then
      redis.call('ZADD', log, unpack(entries))
      entries = {}
    end
  end
  sliding_log_expire(keys, t, window)
end
