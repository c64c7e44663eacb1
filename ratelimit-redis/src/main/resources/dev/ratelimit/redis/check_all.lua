-- Several policies of one key, all or nothing. KEYS: each policy's state keys, in order.
-- ARGV: t (µs), cost, policy count, then per policy: algorithm, window (µs), limit, burst, key count.
-- Returns {allAllowed, then per policy: allowed, remaining, retryAfter, resetAfter, delay}.
local t, c, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local policies = {}
local next_key = 1
for i = 1, count do
  local a = 3 + (i - 1) * 5
  local keys = {}
  for j = 1, tonumber(ARGV[a + 5]) do
    keys[j] = KEYS[next_key]
    next_key = next_key + 1
  end
  policies[i] = {algorithms[ARGV[a + 1]], keys, tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])}
end

local function evaluate(apply)
  local results, all = {}, true
  for i = 1, count do
    local p = policies[i]
    results[i] = p[1](p[2], t, c, p[3], p[4], p[5], apply)
    all = all and results[i][1] == 1
  end
  return results, all
end

-- first without writing; only when every policy allows, again consuming
local results, all = evaluate(false)
if all then
  results = evaluate(true)
end
local reply = {all and 1 or 0}
for i = 1, count do
  for j = 1, 5 do
    reply[#reply + 1] = results[i][j]
  end
end
return reply
