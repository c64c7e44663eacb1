-- SLIDING_WINDOW's reservations, twin of SlidingWindow.java's reserved, giveBack and charge.

-- Mark: the window the reservation counted in.
local function sliding_window_reserved(keys, t, window, limit, burst, ledger_key, id)
  local start = sliding_window_read(get(keys[1]))
  local ledger = ledger_open(ledger_key, id, t, start + window)
  return start, 0, ledger.id
end

-- Gives back into the reservation's window while it is the current one; once it is the previous
-- (weighted, decaying) window or older, nothing.
local function sliding_window_give_back(keys, t, units, window, limit, burst, at, frac, ledger_key, id)
  local start, previous, current = sliding_window_read(get(keys[1]))
  if not start or not ledger_holds(ledger_read(ledger_key), id, t) then
    return
  end
  local s = t - t % window
  if start > s then
    s = start
  end
  if start == at and s == start then
    set_keep_ttl(keys[1], string.format('%d %d %d', start, previous, math.max(0, current - units)))
  end
end

-- Counts units in the current window, up to twice the limit (previous·W stays exact).
local function sliding_window_charge(keys, t, units, window, limit, burst)
  local start, previous, current = sliding_window_read(get(keys[1]))
  local s = t - t % window
  if start and start > s then
    s = start
  end
  local prev, n = 0, 0
  if start == s then
    prev, n = previous, current
  elseif start == s - window then
    prev = current
  end
  n = math.min(2 * limit, n + math.min(units, 2 * limit))
  set_px(keys[1], string.format('%d %d %d', s, prev, n), ttl_ms(s + 2 * window - t))
end
