-- One check of one policy. KEYS: the policy's state keys (with server time, a windowed policy's
-- candidate keys, see keys_at).
-- ARGV: algorithm, t (µs, or 'server'), cost, window (µs), limit, burst, apply (1 to consume, 0 to
-- inspect), and with server time the estimate's window index.
-- Returns {allowed, remaining, retryAfter, resetAfter, delay, t, n, state...}: the time decided at,
-- and on a denial the n numbers of the key's state for the caller's near-cache (n = -1 when there
-- is none to send). allowed = -1: t's window was not among the keys; nothing was done.
return check_one(KEYS, ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]),
  tonumber(ARGV[6]), ARGV[7] == '1', tonumber(ARGV[8]))
