-- Several checks, each of one policy, evaluated one after the other in the order given: the same
-- check_one that check.lua runs, so each check gets exactly the reply check.lua would have given it
-- at that point. KEYS: each check's keys, in order (in a Cluster, all of one hash slot).
-- ARGV: count, then per check 9 values: key count, and check.lua's ARGV (algorithm, t, cost, window,
-- limit, burst, apply, window index or '').
-- Returns, per check, n and then n values: check.lua's reply; or -1 and the error message of a
-- check that raised an error (its effects are those the single script would have left).
local count = tonumber(ARGV[1])
local out = {}
local next_key = 1
for i = 1, count do
  local a = 2 + (i - 1) * 9
  local keys = {}
  for j = 1, tonumber(ARGV[a]) do
    keys[j] = KEYS[next_key]
    next_key = next_key + 1
  end
  local ok, reply = pcall(check_one, keys, ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]),
    tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), tonumber(ARGV[a + 6]), ARGV[a + 7] == '1',
    tonumber(ARGV[a + 8]))
  if ok then
    out[#out + 1] = #reply
    for j = 1, #reply do
      out[#out + 1] = reply[j]
    end
  else
    out[#out + 1] = -1
    out[#out + 1] = type(reply) == 'table' and reply.err or tostring(reply)
  end
end
return out
