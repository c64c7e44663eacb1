-- Reservations: a state's ledger, twin of Ledger.java. Kept beside the state's first key (the same
-- hash tag) under that key + ':ledger' as "id until given_us given_frac": the ledger's identity,
-- when every mark of it is worth nothing (epoch µs; the key expires then), and what the state has
-- given back, given_us + given_frac/L µs (the time-based algorithms). Every number an integer
-- below 2^53, as everywhere.
local MAX_COUNT = 4503599627370496 -- 2^52: a forced charge's bound, in units or credits
local MAX_DEBT = 4503599627370496 -- 2^52 µs: how far a charge may push GCRA's tat past now

-- The ledger under key, or nil.
local function ledger_read(key)
  local stored = redis.call('GET', key)
  if not stored then
    return nil
  end
  local id, until_text, given_us, given_frac = string.match(stored, '^(%d+) (%-?%d+) (%d+) (%d+)$')
  return {id = id, until_at = tonumber(until_text), given_us = tonumber(given_us), given_frac = tonumber(given_frac)}
end

local function ledger_text(ledger)
  return ledger.id .. ' ' .. int(ledger.until_at) .. ' ' .. int(ledger.given_us) .. ' ' .. int(ledger.given_frac)
end

-- Writes a ledger opened or renewed at t: it expires when it stops mattering.
local function ledger_write(key, ledger, t)
  redis.call('SET', key, ledger_text(ledger), 'PX', ttl_ms(ledger.until_at - t))
end

-- Writes what a give-back changed: the ledger matters no longer than before.
local function ledger_save(key, ledger)
  redis.call('SET', key, ledger_text(ledger), 'KEEPTTL')
end

-- The ledger a reservation at t records in: the current one while it matters, else a new one named
-- id; it then matters at least until until_at.
local function ledger_open(key, id, t, until_at)
  local ledger = ledger_read(key)
  if not ledger or ledger.until_at <= t then
    ledger = {id = id, until_at = until_at, given_us = 0, given_frac = 0}
  end
  if until_at > ledger.until_at then
    ledger.until_at = until_at
  end
  ledger_write(key, ledger, t)
  return ledger
end

-- Whether ledger is the one a mark of ledger id was recorded in, and still matters at t.
local function ledger_holds(ledger, id, t)
  return ledger ~= nil and ledger.id == id and ledger.until_at > t
end

-- The mark of a time-based state whose tat is tu + tf/L: tat + given.
local function ledger_mark(ledger, tu, tf, limit)
  local u = tu + ledger.given_us
  local f = tf + ledger.given_frac
  if f >= limit then
    u = u + 1
    f = f - limit
  end
  return u, f
end

-- A reservation of a time-based state whose tat is now tu + tf/L: opens (or renews) the ledger
-- until tat, rounded up, and answers the mark, tat + given: at, frac, ledger id.
local function ledger_reserve_tat(key, id, t, tu, tf, limit)
  local until_at = tu
  if tf > 0 then
    until_at = tu + 1
  end
  local ledger = ledger_open(key, id, t, until_at)
  local at, frac = ledger_mark(ledger, tu, tf, limit)
  return at, frac, ledger.id
end

-- What a give-back of units at t returns, in 1/L µs (credits): clamp(M − given − t, 0, units·W).
local function ledger_credit(ledger, at, frac, t, units, window, limit)
  local du = at - ledger.given_us - t
  local df = frac - ledger.given_frac -- -L < df < L
  if du < 0 or (du == 0 and df <= 0) then
    return 0
  end
  local most = units * window -- at most burst·W <= 2^52
  if du > math.floor(most / limit) + 1 then
    return most
  end
  return math.min(du * limit + df, most)
end

-- Records g (1/L µs) as given back.
local function ledger_given(ledger, g, limit)
  ledger.given_us = ledger.given_us + math.floor(g / limit)
  ledger.given_frac = ledger.given_frac + g % limit
  if ledger.given_frac >= limit then
    ledger.given_us = ledger.given_us + 1
    ledger.given_frac = ledger.given_frac - limit
  end
end

-- SET key value, keeping its TTL, remembered for later reads in this call.
local function set_keep_ttl(key, value)
  redis.call('SET', key, value, 'KEEPTTL')
  strings[key] = value
end
