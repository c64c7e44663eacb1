-- Shared by every script, which is assembled (Scripts.java) from this prelude, the files of the
-- algorithms it may run, their registry, check_one.lua (for check.lua and check_batch.lua), then
-- its main. Each algorithm file defines
-- two local functions (GCRA and LEAKY_BUCKET share gcra.lua's):
--   NAME(keys, t, c, window, limit, burst, apply, name) -> allowed, remaining, retryAfter, resetAfter, delay
--     (five values, not a table: nothing to allocate)
--   NAME_state(keys, t, window, limit, burst) -> the state as numbers (read-only), for the caller's
--     near-cache, which evaluates it with the Java twin (StateSnapshots); nil when too large to send
-- and the generated registry maps each algorithm's name to them:
--   local algorithms = {gcra = gcra, leaky_bucket = gcra}; local states = {...}
-- A script defines only the algorithms it may run, and builds its tables in one constructor each:
-- every function and table here is made again on every call, so what a script does not need it
-- does not define.
-- All times are epoch microseconds, passed in by the caller: scripts never read the clock.
-- Every number stays an integer below 2^53, so Lua's doubles compute exactly what Java's longs do.

-- The string keys this call has read or written: no key is read twice in one call (a denial reads
-- its state again for the near-cache, checkAll evaluates each policy twice, a batch may visit a key
-- many times). A script sees no other client's writes, so the copy stays true; false is a missing key.
local strings = {}

local function get(key)
  local value = strings[key]
  if value == nil then
    value = redis.call('GET', key)
    strings[key] = value
  end
  return value
end

-- Writes held back while a multi-policy check decides (check_many.lua), each {key, value, ms,
-- the value before}; nil otherwise, when every write goes out at once.
local deferred = nil

-- SET key value PX ms (or held back, see deferred), remembered for later reads in this call.
local function set_px(key, value, ms)
  if deferred then
    deferred[#deferred + 1] = {key, value, ms, get(key)} -- an algorithm reads its key before it writes it
  else
    redis.call('SET', key, value, 'PX', ms)
  end
  strings[key] = value
end

-- A whole number as text, without tostring's loss of digits beyond 14.
local function int(x)
  return string.format('%d', x)
end

-- A TTL for PX: whole milliseconds, rounded up, at least 1. A number: redis.call writes it in full
-- (a TTL in ms stays far below the 14 digits where a bare number would lose any).
local function ttl_ms(us)
  local ms = math.floor((us + 999) / 1000)
  if ms < 1 then
    return 1
  end
  return ms
end

-- ceil(a / b) for b > 0.
local function ceil_div(a, b)
  return -math.floor(-a / b)
end

-- The time to decide at, in µs: the caller's, or with 'server' Redis's own clock (TIME), for fleets
-- whose clocks cannot be trusted.
local function decision_time(arg)
  if arg == 'server' then
    local now = redis.call('TIME')
    return tonumber(now[1]) * 1000000 + tonumber(now[2])
  end
  return tonumber(arg)
end
