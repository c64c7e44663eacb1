-- One check of one policy. KEYS: the policy's state keys.
-- ARGV: algorithm, t (µs), cost, window (µs), limit, burst, apply (1 to consume, 0 to inspect).
return algorithms[ARGV[1]](KEYS, tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7] == '1')
