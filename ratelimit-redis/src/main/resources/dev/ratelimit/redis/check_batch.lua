-- Several checks evaluated one after the other in the order given: each of one policy runs the same
-- check_one that check.lua runs, each of several policies of one key the same check_many that
-- check_all.lua runs, so each check gets exactly the reply its own script would have given it at
-- that point. KEYS: each check's keys, in order (in a Cluster, all of one hash slot).
-- ARGV[1]: the batch's policies, one line each ended by a newline: algorithm, window, limit, burst
-- and apply as check.lua takes them ("gcra 600000 100 100 1").
-- ARGV[2]: the batch's base time, µs: the least t of its checks (0 with server time).
-- ARGV[3]: the checks, one line each ended by a newline: key count, policy (line number in
-- ARGV[1]; for several policies their numbers joined by '+', lines whose apply is 1), t − base (or
-- 'server'), cost ("1 1 250 1"; "1 2 server 1"; "3 1+3 250 1").
-- Lua reads strings slowly: each check sends only what differs from check to check, and short
-- numbers (a 16-digit time costs tonumber several times a 3-digit offset).
-- Returns one string, one line per check in order, each ended by a newline: its script's reply,
-- the integers separated by spaces ("1 99 0 600000 0 1700000000000000 0"); or 'E', a space and the
-- error message (newlines made spaces) of a check that raised an error, whose effects are those
-- the single script would have left. One string is one element for the client to decode.

-- The policies by their line number as the checks give it (a string: no tonumber per check).
local policies = {}
local count = 0
for name, window, limit, burst, apply in string.gmatch(ARGV[1], '(%S+) (%d+) (%d+) (%d+) ([01])\n') do
  count = count + 1
  policies[tostring(count)] = {name, tonumber(window), tonumber(limit), tonumber(burst), apply == '1'}
end
local base_t = tonumber(ARGV[2])

local out = {}
local next_key = 1
local checked = 0
-- check_one's reply as one line.
local function check_line(keys, name, t, c, window, limit, burst, apply)
  return line(check_one(keys, name, t, c, window, limit, burst, apply))
end

-- check_many's reply as one line, for the policies numbered in p ("1+3").
local function check_many_line(keys, p, t, c)
  local specs = {}
  for number in string.gmatch(p, '%d+') do
    local policy = policies[number]
    specs[#specs + 1] = {policy[1], policy[2], policy[3], policy[4]}
  end
  return line(check_many(keys, t, c, specs))
end

for n, p, dt, c in string.gmatch(ARGV[3], '(%d+) ([%d+]+) (%S+) (%-?%d+)\n') do
  checked = checked + 1
  local keys = {KEYS[next_key]}
  next_key = next_key + 1
  for j = 2, tonumber(n) do
    keys[j] = KEYS[next_key]
    next_key = next_key + 1
  end
  local policy = policies[p]
  local t = dt
  if dt ~= 'server' then
    t = base_t + tonumber(dt)
  end
  local ok, reply
  if policy then
    ok, reply = pcall(check_line, keys, policy[1], t, tonumber(c), policy[2], policy[3], policy[4], policy[5])
  else
    ok, reply = pcall(check_many_line, keys, p, t, tonumber(c))
  end
  if ok then
    out[#out + 1] = reply
  else
    forget_deferred() -- what a multi-policy check that failed held back or wrote is read again
    local message = type(reply) == 'table' and reply.err or tostring(reply)
    out[#out + 1] = 'E ' .. (string.gsub(message, '\n', ' '))
  end
end
-- Every line the client sends matches; should one not (a bug), the checks after it would have run
-- on the wrong keys: every check of the batch then fails (as a batch that timed out would)
local _, lines = string.gsub(ARGV[3], '\n', '')
if checked ~= lines or next_key - 1 ~= #KEYS then
  return redis.error_reply('check_batch: ' .. checked .. ' of ' .. lines .. ' lines and ' .. (next_key - 1)
    .. ' of ' .. #KEYS .. ' keys read')
end
out[#out + 1] = ''
return table.concat(out, '\n')
