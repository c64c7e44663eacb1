-- Several policies of one key, all or nothing (see check_many.lua). KEYS: each policy's state keys,
-- in order. ARGV: t (µs, or 'server'), cost, policy count, then per policy one string: algorithm,
-- window (µs), limit and burst, separated by spaces (one argument per policy, not four: less to
-- encode and to parse).
local specs = {}
for i = 1, tonumber(ARGV[3]) do
  local name, window, limit, burst = string.match(ARGV[3 + i], '^(%S+) (%S+) (%S+) (%S+)$')
  specs[i] = {name, tonumber(window), tonumber(limit), tonumber(burst)}
end
return check_many(KEYS, ARGV[1], tonumber(ARGV[2]), specs)
