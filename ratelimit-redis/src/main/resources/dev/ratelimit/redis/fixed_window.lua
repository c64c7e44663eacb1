-- FIXED_WINDOW: a count n for the window starting at s. Twin of FixedWindow.java.
-- keys[1]: this window's counter, named by the caller from t (the key is never computed here).
local function fixed_window(keys, t, c, window, limit, burst, apply)
  local s = t - t % window
  local n = tonumber(get(keys[1]) or '0')
  local window_end = s + window - t
  if n + c <= limit then
    if apply then
      n = n + c
      set_px(keys[1], int(n), ttl_ms(window_end))
    end
    local reset_after = 0
    if n > 0 then
      reset_after = window_end
    end
    return 1, limit - n, 0, reset_after, 0
  end
  return 0, math.max(0, limit - n), window_end, window_end, 0
end

-- The state as StateSnapshots reads it: {windowStart, count}.
local function fixed_window_state(keys, t, window, limit, burst)
  return {t - t % window, tonumber(get(keys[1]) or '0')}
end
