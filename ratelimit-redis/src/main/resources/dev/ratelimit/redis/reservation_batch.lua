-- Several reserves and settles one after the other in the order given, each by the same function
-- its own script runs (reserve_main, settle_main), so each gets exactly the reply its own script
-- would have given it at that point.
-- ARGV[1]: one line per call, each ended by a newline: its kind ('r' reserve, 's' settle), its key
-- count and its argument count ("r 3 5").
-- ARGV[2...]: every call's arguments, in order. KEYS: every call's keys, in order (in a Cluster,
-- all of one hash slot).
-- Returns one string, one line per call in order, each ended by a newline: its script's reply,
-- the integers separated by spaces; or 'E', a space and the error message (newlines made spaces)
-- of a call that raised an error, whose effects are those its own script would have left.

local out = {}
local next_key = 1
local next_arg = 2
local calls = 0
for kind, key_count, arg_count in string.gmatch(ARGV[1], '([rs]) (%d+) (%d+)\n') do
  calls = calls + 1
  local keys = {}
  for j = 1, tonumber(key_count) do
    keys[j] = KEYS[next_key]
    next_key = next_key + 1
  end
  local args = {}
  for j = 1, tonumber(arg_count) do
    args[j] = ARGV[next_arg]
    next_arg = next_arg + 1
  end
  local ok, reply = pcall(kind == 'r' and reserve_main or settle_main, keys, args)
  if ok then
    out[#out + 1] = line(reply)
  else
    forget_deferred() -- what a reserve that failed held back or wrote is read again
    local message = type(reply) == 'table' and reply.err or tostring(reply)
    out[#out + 1] = 'E ' .. (string.gsub(message, '\n', ' '))
  end
end
-- Every line the client sends matches; should one not (a bug), the calls after it would have run on
-- the wrong keys: every call of the batch then fails (as a batch that timed out would)
local _, lines = string.gsub(ARGV[1], '\n', '')
if calls ~= lines or next_key - 1 ~= #KEYS or next_arg - 1 ~= #ARGV then
  return redis.error_reply('reservation_batch: ' .. calls .. ' of ' .. lines .. ' lines, ' .. (next_key - 1)
    .. ' of ' .. #KEYS .. ' keys and ' .. (next_arg - 1) .. ' of ' .. #ARGV .. ' arguments read')
end
out[#out + 1] = ''
return table.concat(out, '\n')
