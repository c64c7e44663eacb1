-- Several checks, each of one policy, evaluated one after the other in the order given: the same
-- check_one that check.lua runs, so each check gets exactly the reply check.lua would have given it
-- at that point. KEYS: each check's keys, in order (in a Cluster, all of one hash slot).
-- ARGV[1]: one line per check, each ended by a newline: its key count and check.lua's ARGV,
-- separated by spaces ("1 gcra 1700000000000000 1 600000 100 100 1": keys, algorithm, t, cost,
-- window, limit, burst, apply, and with server time the window index).
-- Returns one string, one line per check in order, each ended by a newline: check.lua's reply, its
-- integers separated by spaces ("1 99 0 600000 0 1700000000000000 0"); or 'E', a space and the
-- error message (newlines made spaces) of a check that raised an error, whose effects are those
-- the single script would have left. One argument and one string, rather than nine arguments per
-- check and a list of integers, are what the client encodes and decodes fastest.
local formats = {}

-- check_one's reply as one line of integers ('%d': t and the states are µs beyond %.14g).
local function check_line(keys, name, t, c, window, limit, burst, apply, base)
  local reply = check_one(keys, name, t, c, window, limit, burst, apply, base)
  local format = formats[#reply]
  if not format then
    format = string.rep('%d ', #reply - 1) .. '%d'
    formats[#reply] = format
  end
  return string.format(format, unpack(reply))
end

local out = {}
local next_key = 1
for line in string.gmatch(ARGV[1], '[^\n]+') do
  local n, name, t, c, window, limit, burst, apply, base =
    string.match(line, '^(%d+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) ?(%S*)$')
  local keys = {}
  for j = 1, tonumber(n) do
    keys[j] = KEYS[next_key]
    next_key = next_key + 1
  end
  local ok, reply = pcall(check_line, keys, name, t, tonumber(c), tonumber(window), tonumber(limit),
    tonumber(burst), apply == '1', tonumber(base))
  if ok then
    out[#out + 1] = reply
  else
    local message = type(reply) == 'table' and reply.err or tostring(reply)
    out[#out + 1] = 'E ' .. (string.gsub(message, '\n', ' '))
  end
end
out[#out + 1] = ''
return table.concat(out, '\n')
