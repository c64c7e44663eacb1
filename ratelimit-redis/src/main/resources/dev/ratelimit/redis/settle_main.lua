-- Settles a reservation on one key's policies: gives units back into each (by its algorithm's
-- rule, from the reservation's mark), or charges them to each whatever the limit.
-- Applied once per settle identity: a retry of a settle whose answer was lost, but which ran, finds
-- the identity's marker and changes nothing.
-- KEYS: each policy's state keys, in order, then each policy's ledger key, in order, then the
-- settle's marker key.
-- ARGV: 'give' or 'charge', t (µs, or 'server'), units, policy count, then per policy one string:
-- algorithm, window (µs), limit, burst, and the mark's at, fraction and ledger id (0 0 0 for a
-- charge), separated by spaces; then the settle's identity (0 for none) and its marker's TTL (ms).
-- Returns {t}.
local function settle_main(KEYS, ARGV)
  local t = decision_time(ARGV[2])
  local give = ARGV[1] == 'give'
  local units = tonumber(ARGV[3])
  local count = tonumber(ARGV[4])
  if ARGV[5 + count] ~= '0' and not redis.call('SET', KEYS[#KEYS], '1', 'NX', 'PX', tonumber(ARGV[6 + count])) then
    return {t} -- applied before
  end
  local next_key = 1
  local ledgers = #KEYS - 1 - count
  for i = 1, count do
    local name, window, limit, burst, at, frac, id =
      string.match(ARGV[4 + i], '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$')
    window, limit, burst = tonumber(window), tonumber(limit), tonumber(burst)
    local policy_keys = {KEYS[next_key]}
    next_key = next_key + 1
    if name == 'sliding_log' then
      policy_keys[2] = KEYS[next_key]
      next_key = next_key + 1
    end
    if give then
      give_backs[name](policy_keys, t, units, window, limit, burst, tonumber(at), tonumber(frac), KEYS[ledgers + i], id)
    else
      charges[name](policy_keys, t, units, window, limit, burst)
    end
  end
  return {t}
end
