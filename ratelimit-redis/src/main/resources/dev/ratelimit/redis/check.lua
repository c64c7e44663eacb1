-- One check of one policy. KEYS: the policy's state keys (with server time, a windowed policy's
-- candidate keys, see keys_at).
-- ARGV: algorithm, t (µs, or 'server'), cost, window (µs), limit, burst, apply (1 to consume, 0 to
-- inspect), and with server time the estimate's window index.
-- Returns {allowed, remaining, retryAfter, resetAfter, delay, t, n, state...}: the time decided at,
-- and on a denial the n numbers of the key's state for the caller's near-cache (n = -1 when there
-- is none to send). allowed = -1: t's window was not among the keys; nothing was done.
local name, window, limit, burst = ARGV[1], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local t = decision_time(ARGV[2])
local keys = keys_at(name, KEYS, t, window, tonumber(ARGV[8]))
if not keys then
  return {-1, 0, 0, 0, 0, t, 0}
end
local reply = algorithms[name](keys, t, tonumber(ARGV[3]), window, limit, burst, ARGV[7] == '1')
reply[6] = t
reply[7] = 0
if reply[1] == 0 then
  local state = states[name](keys, t, window, limit, burst)
  if state then
    reply[7] = #state
    for i = 1, #state do
      reply[7 + i] = state[i]
    end
  else
    reply[7] = -1
  end
end
return reply
