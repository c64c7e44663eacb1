-- SLIDING_WINDOW (counter): the previous window's count weighted by the part of it still inside the
-- sliding window, plus the current window's count; integers scaled by W. Twin of SlidingWindow.java.
-- keys[1]: this window's counter; keys[2]: the previous window's; both named by the caller from t.

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
  local s = t - t % window
  local prev = tonumber(get(keys[2]) or '0')
  local n = tonumber(get(keys[1]) or '0')
  local elapsed = t - s
  -- estimate·W = prev·(W − elapsed) + n·W; allow iff estimate + c <= limit
  local weighted = prev * (window - elapsed)
  if weighted <= (limit - n - c) * window then
    if apply then
      n = n + c
      set_px(keys[1], int(n), ttl_ms(s + 2 * window - t))
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
  return {t - t % window, tonumber(get(keys[2]) or '0'), tonumber(get(keys[1]) or '0')}
end
