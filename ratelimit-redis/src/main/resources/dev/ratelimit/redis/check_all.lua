-- Several policies of one key, all or nothing. KEYS: each policy's state keys, in order.
-- ARGV: t (µs, or 'server'), cost, policy count, then per policy one string: algorithm, window
-- (µs), limit, burst and key count, separated by spaces (one argument per policy, not five: less to
-- encode and to parse).
-- Returns {allAllowed, t, then per policy: allowed, remaining, retryAfter, resetAfter, delay, n,
-- state...}: the time decided at and, when not all allowed, the n numbers of each policy's state
-- for the caller's near-cache (n = -1 when there is none to send; n = 0 when all allowed).
local t, c, count = decision_time(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local policies = {}
local next_key = 1
for i = 1, count do
  local name, window, limit, burst, n = string.match(ARGV[3 + i], '^(%S+) (%S+) (%S+) (%S+) (%S+)$')
  local keys = {}
  for j = 1, tonumber(n) do
    keys[j] = KEYS[next_key]
    next_key = next_key + 1
  end
  policies[i] = {algorithms[name], keys, tonumber(window), tonumber(limit), tonumber(burst), states[name], name}
end

local function evaluate(apply)
  local results, all = {}, true
  for i = 1, count do
    local p = policies[i]
    results[i] = {p[1](p[2], t, c, p[3], p[4], p[5], apply, p[7])}
    all = all and results[i][1] == 1
  end
  return results, all
end

-- first without writing; only when every policy allows, again consuming
local results, all = evaluate(false)
if all then
  results = evaluate(true)
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
