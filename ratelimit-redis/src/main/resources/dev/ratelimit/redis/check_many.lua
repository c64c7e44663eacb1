-- Drops the writes held back, none of which went out: later reads in this call see the stored
-- values again.
local function discard_deferred()
  for i = #deferred, 1, -1 do
    strings[deferred[i][1]] = deferred[i][4]
  end
  deferred = nil
end

-- After an error while writes were held back or going out (some may have gone): later reads in
-- this call read those keys from Redis again.
local function forget_deferred()
  if deferred then
    for i = 1, #deferred do
      strings[deferred[i][1]] = nil
    end
    deferred = nil
  end
end

-- Several policies of one key, all or nothing, as check_all.lua and check_batch.lua run it.
-- keys: every policy's state keys, in order (two for sliding_log, its log and its sequence; one
-- for the others). specs: per policy {algorithm, window, limit, burst}.
-- Returns {allAllowed, t, then per policy: allowed, remaining, retryAfter, resetAfter, delay, n,
-- state...}: the time decided at and, when not all allowed, the n numbers of each policy's state for
-- the caller's near-cache (n = -1 when there is none to send; n = 0 when all allowed).
-- Each policy is evaluated once, consuming, with its writes held back until every policy has
-- allowed; then they go out. The sliding log, whose writes read back what they wrote, is first
-- evaluated without consuming and consumes once all have allowed. When one denies, nothing is
-- written, and the policies that allowed are evaluated again without consuming, for the answer.
local function check_many(keys, time_arg, c, specs)
  local t = decision_time(time_arg)
  local count = #specs
  local policies = {}
  local next_key = 1
  for i = 1, count do
    local name, window, limit, burst = specs[i][1], specs[i][2], specs[i][3], specs[i][4]
    local policy_keys = {keys[next_key]}
    next_key = next_key + 1
    if name == 'sliding_log' then
      policy_keys[2] = keys[next_key]
      next_key = next_key + 1
    end
    policies[i] = {algorithms[name], policy_keys, window, limit, burst, states[name], name}
  end

  local results, all = {}, true
  deferred = {}
  for i = 1, count do
    local p = policies[i]
    results[i] = {p[1](p[2], t, c, p[3], p[4], p[5], p[7] ~= 'sliding_log', p[7])}
    all = all and results[i][1] == 1
  end
  if all then
    for i = 1, #deferred do -- an error here leaves deferred set, for the caller's forget_deferred
      redis.call('SET', deferred[i][1], deferred[i][2], 'PX', deferred[i][3])
    end
    deferred = nil
    for i = 1, count do
      local p = policies[i]
      if p[7] == 'sliding_log' then
        results[i] = {p[1](p[2], t, c, p[3], p[4], p[5], true, p[7])}
      end
    end
  else
    discard_deferred()
    for i = 1, count do
      local p = policies[i]
      if results[i][1] == 1 and p[7] ~= 'sliding_log' then
        results[i] = {p[1](p[2], t, c, p[3], p[4], p[5], false, p[7])}
      end
    end
  end

  local reply = {all and 1 or 0, t}
  for i = 1, count do
    for j = 1, 5 do
      reply[#reply + 1] = results[i][j]
    end
    local state = {}
    if not all then
      local p = policies[i]
      state = p[6](p[2], t, p[3], p[4], p[5])
    end
    if state then
      reply[#reply + 1] = #state
      for j = 1, #state do
        reply[#reply + 1] = state[j]
      end
    else
      reply[#reply + 1] = -1
    end
  end
  return reply
end
