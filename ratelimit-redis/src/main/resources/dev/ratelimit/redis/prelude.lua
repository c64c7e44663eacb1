-- Shared by every script. Each algorithm file registers a function in `algorithms`:
--   algorithms.NAME(keys, t, c, window, limit, burst, apply) -> {allowed, remaining, retryAfter, resetAfter, delay}
-- All times are epoch microseconds, passed in by the caller: scripts never read the clock.
-- Every number stays an integer below 2^53, so Lua's doubles compute exactly what Java's longs do.
local algorithms = {}

-- A whole number as text, without tostring's loss of digits beyond 14.
local function int(x)
  return string.format('%d', x)
end

-- A TTL for PX: whole milliseconds, rounded up, at least 1.
local function ttl_ms(us)
  local ms = math.floor((us + 999) / 1000)
  if ms < 1 then
    return '1'
  end
  return int(ms)
end

-- ceil(a / b) for b > 0.
local function ceil_div(a, b)
  return -math.floor(-a / b)
end
