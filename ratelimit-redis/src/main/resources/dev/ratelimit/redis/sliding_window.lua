-- SLIDING_WINDOW (counter): the previous window's count weighted by the part of it still inside the
-- sliding window, plus the current window's count; integers scaled by W. Twin of SlidingWindow.java.
-- keys[1]: "start previous current", the key's newest window and the counts of it and of the one
-- before. A key's time never goes back: a check stamped before that window counts in it, decided at
-- its start, with retryAfter measured from its own t.

-- The stored windows as start, previous, current; nil when there are none.
local function sliding_window_read(stored)
  if not stored then
    return nil
  end
  local start_text, previous_text, current_text = string.match(stored, '^(%-?%d+) (%d+) (%d+)$')
  return tonumber(start_text), tonumber(previous_text), tonumber(current_text)
end

-- The first moment the estimate plus c fits: in this window, the next, or the one after.
local function sliding_window_retry_at(s, window, limit, prev, n, c)
  local room = limit - n - c
  if room >= 0 and prev > 0 then
    local x = window - math.floor(room * window / prev)
    if x < window then
      return s + x
    end
  end
  local next_room = limit - c
  if n <= next_room then
    return s + window
  end
  local x = window - math.floor(next_room * window / n)
  if x < window then
    return s + window + x
  end
  return s + 2 * window
end

local function sliding_window(keys, t, c, window, limit, burst, apply)
  local start, previous, current = sliding_window_read(get(keys[1]))
  local s = t - t % window
  if start and start > s then
    s = start -- the key's newest window: time never goes back
  end
  local prev, n = 0, 0
  if start == s then
    prev, n = previous, current
  elseif start == s - window then
    prev = current
  end
  local elapsed = math.max(0, t - s) -- a check stamped before its window is decided at the window's start
  -- estimate·W = prev·(W − elapsed) + n·W; allow iff estimate + c <= limit
  local weighted = prev * (window - elapsed)
  if weighted <= (limit - n - c) * window then
    if apply then
      n = n + c
      set_px(keys[1], string.format('%d %d %d', s, prev, n), ttl_ms(s + 2 * window - t))
    end
    local reset_after = 0
    if n > 0 then
      reset_after = s + 2 * window - t
    elseif prev > 0 then
      reset_after = s + window - t
    end
    return 1, limit - n - ceil_div(weighted, window), 0, reset_after, 0
  end
  local remaining = math.max(0, limit - n - ceil_div(weighted, window))
  local reset_after = s + window - t
  if n > 0 then
    reset_after = s + 2 * window - t
  end
  return 0, remaining, sliding_window_retry_at(s, window, limit, prev, n, c) - t, reset_after, 0
end

-- The state as StateSnapshots reads it: {windowStart, previous, current}.
local function sliding_window_state(keys, t, window, limit, burst)
  local start, previous, current = sliding_window_read(get(keys[1]))
  if not start then
    return {t - t % window, 0, 0}
  end
  return {start, previous, current}
end
