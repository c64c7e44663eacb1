-- FIXED_WINDOW's reservations, twin of FixedWindow.java's reserved, giveBack and charge.

-- Mark: the window the reservation counted in.
local function fixed_window_reserved(keys, t, window, limit, burst, ledger_key, id)
  local start = fixed_window_read(get(keys[1]))
  local ledger = ledger_open(ledger_key, id, t, start + window)
  return start, 0, ledger.id
end

-- Gives back into the reservation's window while it is the current one; an ended window takes nothing.
local function fixed_window_give_back(keys, t, units, window, limit, burst, at, frac, ledger_key, id)
  local start, count = fixed_window_read(get(keys[1]))
  if not start or not ledger_holds(ledger_read(ledger_key), id, t) then
    return
  end
  local s = t - t % window
  if start > s then
    s = start
  end
  if start == at and s == start then
    set_keep_ttl(keys[1], string.format('%d %d', start, math.max(0, count - units)))
  end
end

local function fixed_window_charge(keys, t, units, window, limit, burst)
  local start, count = fixed_window_read(get(keys[1]))
  local s = t - t % window
  if start and start > s then
    s = start
  end
  local n = 0
  if start == s then
    n = count
  end
  n = math.min(MAX_COUNT, n + units)
  set_px(keys[1], string.format('%d %d', s, n), ttl_ms(s + window - t))
end
