-- GCRA's and LEAKY_BUCKET's reservations, twin of Gcra.java's reserved, giveBack and charge.

local function gcra_write(key, tu, tf, t)
  set_px(key, string.format('%d %d', tu, tf), ttl_ms(gcra_reset_after(tu, tf, t)))
end

-- Mark: tat + given.
local function gcra_reserved(keys, t, window, limit, burst, ledger_key, id)
  local tu, tf = gcra_read(get(keys[1]))
  return ledger_reserve_tat(ledger_key, id, t, tu, tf, limit)
end

-- Lowers tat by what ledger_credit allows; tat stays at or after t.
local function gcra_give_back(keys, t, units, window, limit, burst, at, frac, ledger_key, id)
  local tu, tf = gcra_read(get(keys[1]))
  local ledger = ledger_read(ledger_key)
  if not tu or not ledger_holds(ledger, id, t) then
    return
  end
  local g = ledger_credit(ledger, at, frac, t, units, window, limit)
  if g > 0 then
    tu = tu - math.floor(g / limit)
    tf = tf - g % limit
    if tf < 0 then
      tu = tu - 1
      tf = tf + limit
    end
    ledger_given(ledger, g, limit)
    ledger_save(ledger_key, ledger)
    set_keep_ttl(keys[1], string.format('%d %d', tu, tf)) -- a give-back never needs a longer life
  end
end

-- tat = max(tat, t) + units·T whatever the limit: at most 2^52 / W units, tat at most 2^52 µs past t.
local function gcra_charge(keys, t, units, window, limit, burst)
  local tu, tf = gcra_read(get(keys[1]))
  if not tu or tu < t then
    tu, tf = t, 0
  end
  local credits = math.min(units, math.floor(MAX_COUNT / window)) * window -- units·T in 1/L µs
  local nu = tu + math.floor(credits / limit)
  local nf = tf + credits % limit
  if nf >= limit then
    nu = nu + 1
    nf = nf - limit
  end
  if nu - t > MAX_DEBT then
    nu, nf = t + MAX_DEBT, 0
  end
  gcra_write(keys[1], nu, nf, t)
end
