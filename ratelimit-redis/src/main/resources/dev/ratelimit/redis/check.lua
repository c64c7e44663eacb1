-- One check of one policy. KEYS: the policy's state keys.
-- ARGV: algorithm, t (µs, or 'server'), cost, window (µs), limit, burst, apply (1 to consume, 0 to
-- inspect).
-- Returns {allowed, remaining, retryAfter, resetAfter, delay, t, n, state...}: the time decided at,
-- and on a denial the n numbers of the key's state for the caller's near-cache (n = -1 when there
-- is none to send).
return check_one(KEYS, ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]),
  tonumber(ARGV[6]), ARGV[7] == '1')
