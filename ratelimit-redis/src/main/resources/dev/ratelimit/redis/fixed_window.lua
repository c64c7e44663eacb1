-- FIXED_WINDOW: a count n for the window starting at s. Twin of FixedWindow.java.
-- keys[1]: "start count", the key's newest window and its count. A key's time never goes back: a
-- check stamped before that window (a slow caller, a clock stepped back) counts in it, and its
-- retryAfter is measured from its own t.

-- The stored window as start, count; nil when there is none.
local function fixed_window_read(stored)
  if not stored then
    return nil
  end
  local start_text, count_text = string.match(stored, '^(%-?%d+) (%d+)$')
  return tonumber(start_text), tonumber(count_text)
end

local function fixed_window(keys, t, c, window, limit, burst, apply)
  local start, count = fixed_window_read(get(keys[1]))
  local s = t - t % window
  if start and start > s then
    s = start -- the key's newest window: time never goes back
  end
  local n = 0
  if start == s then
    n = count
  end
  local window_end = s + window - t
  if n + c <= limit then
    if apply then
      n = n + c
      set_px(keys[1], string.format('%d %d', s, n), ttl_ms(window_end))
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
  local start, count = fixed_window_read(get(keys[1]))
  if not start then
    return {t - t % window, 0}
  end
  return {start, count}
end
