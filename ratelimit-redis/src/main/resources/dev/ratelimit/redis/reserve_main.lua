-- A reservation of one key's policies, all or nothing: decided and consumed as check_all.lua does,
-- then each policy's state records it in its ledger (ledger.lua) and answers its mark.
-- KEYS: each policy's state keys, in order, then each policy's ledger key, in order.
-- ARGV: t (µs, or 'server'), cost, policy count, a ledger id (used by a ledger this opens), then per
-- policy one string: algorithm, window (µs), limit and burst, separated by spaces.
-- Returns check_all.lua's reply and, when allowed, per policy its mark: at, fraction, ledger id.
local function reserve_main(KEYS, ARGV)
  local count = tonumber(ARGV[3])
  local specs = {}
  for i = 1, count do
    local name, window, limit, burst = string.match(ARGV[4 + i], '^(%S+) (%S+) (%S+) (%S+)$')
    specs[i] = {name, tonumber(window), tonumber(limit), tonumber(burst)}
  end
  local reply = check_many(KEYS, ARGV[1], tonumber(ARGV[2]), specs)
  if reply[1] == 1 then
    local t = reply[2]
    local next_key = 1
    local ledgers = #KEYS - count
    for i = 1, count do
      local name, window, limit, burst = specs[i][1], specs[i][2], specs[i][3], specs[i][4]
      local policy_keys = {KEYS[next_key]}
      next_key = next_key + 1
      if name == 'sliding_log' then
        policy_keys[2] = KEYS[next_key]
        next_key = next_key + 1
      end
      local at, frac, id = reserved[name](policy_keys, t, window, limit, burst, KEYS[ledgers + i], ARGV[4])
      reply[#reply + 1] = at
      reply[#reply + 1] = frac
      reply[#reply + 1] = id
    end
  end
  return reply
end
