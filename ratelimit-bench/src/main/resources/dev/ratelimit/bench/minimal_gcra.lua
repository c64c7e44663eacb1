-- A minimal GCRA check, the yardstick for ours: one key, GET, compare, SET PX when allowed.
-- KEYS[1]: the theoretical arrival time (µs). ARGV: now (µs), T = W/L (µs), tau = B·T (µs), cost.
-- Returns {allowed, retryAfter µs}.
local now = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
if tat < now then
  tat = now
end
local new_tat = tat + tonumber(ARGV[2]) * tonumber(ARGV[4])
local allow_at = new_tat - tonumber(ARGV[3])
if allow_at > now then
  return {0, allow_at - now}
end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
return {1, 0}
