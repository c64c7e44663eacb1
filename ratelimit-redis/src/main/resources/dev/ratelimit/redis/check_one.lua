-- One check of one policy, as check.lua and check_batch.lua run it: the algorithm's reply, then t
-- and, on a denial, the key's state for the near-cache (see check.lua for the layout).
local function check_one(keys, name, time_arg, c, window, limit, burst, apply)
  local t = decision_time(time_arg)
  local allowed, remaining, retry_after, reset_after, delay =
    algorithms[name](keys, t, c, window, limit, burst, apply, name)
  local reply = {allowed, remaining, retry_after, reset_after, delay, t, 0}
  if allowed == 0 then
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
end
