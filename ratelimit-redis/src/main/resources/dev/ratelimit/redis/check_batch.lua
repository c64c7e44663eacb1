-- Several checks, each of one policy, evaluated one after the other in the order given: the same
-- check_one that check.lua runs, so each check gets exactly the reply check.lua would have given it
-- at that point. KEYS: each check's keys, in order (in a Cluster, all of one hash slot).
-- ARGV: count, then per check one string, its key count and check.lua's ARGV separated by spaces
-- ("1 gcra 1700000000000000 1 600000 100 100 1": keys, algorithm, t, cost, window, limit, burst,
-- apply, and with server time the window index): one argument per check, not nine, is less to
-- encode for the client and less to parse for the server.
-- Returns, per check, n and then n values: check.lua's reply; or -1 and the error message of a
-- check that raised an error (its effects are those the single script would have left).
local out = {}
local next_key = 1
for i = 2, tonumber(ARGV[1]) + 1 do
  local n, name, t, c, window, limit, burst, apply, base =
    string.match(ARGV[i], '^(%d+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) ?(%S*)$')
  local keys = {}
  for j = 1, tonumber(n) do
    keys[j] = KEYS[next_key]
    next_key = next_key + 1
  end
  local ok, reply = pcall(check_one, keys, name, t, tonumber(c), tonumber(window), tonumber(limit),
    tonumber(burst), apply == '1', tonumber(base))
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
