-- TOKEN_BUCKET: capacity B refilled at L per W, kept in credits of 1/W token so that the refill is
-- exactly L credits per µs and a unit costs W credits. A new bucket is full. Twin of TokenBucket.java.
-- keys[1]: "credits last".
local function token_bucket(keys, t, c, window, limit, burst, apply)
  local capacity = burst * window
  local tokens = capacity
  local stored = get(keys[1])
  local last = t
  local lag = 0 -- a late check (t before the last refill): the bucket refills from last, not from t
  if stored then
    local credits_text, last_text = string.match(stored, '^(%-?%d+) (%-?%d+)$')
    local credits = tonumber(credits_text)
    last = tonumber(last_text)
    local elapsed = math.max(0, t - last)
    lag = math.max(0, last - t)
    local missing = capacity - credits
    if missing > 0 and elapsed <= math.floor(missing / limit) then
      tokens = credits + elapsed * limit
    end
    last = math.max(last, t)
  end
  local need = c * window
  if tokens >= need then
    if apply then
      tokens = tokens - need
    end
    local until_full = ceil_div(capacity - tokens, limit)
    if apply then
      set_px(keys[1], string.format('%d %d', tokens, last), ttl_ms(last + until_full - t))
    end
    local reset_after = 0
    if until_full > 0 then
      reset_after = lag + until_full
    end
    return 1, math.floor(tokens / window), 0, reset_after, 0
  end
  return 0, math.floor(math.max(0, tokens) / window), lag + ceil_div(need - tokens, limit), lag + ceil_div(capacity - tokens, limit), 0
end

-- The state as StateSnapshots reads it: {credits, last}; a missing bucket is a full one now.
local function token_bucket_state(keys, t, window, limit, burst)
  local stored = get(keys[1])
  if not stored then
    return {burst * window, t}
  end
  local credits_text, last_text = string.match(stored, '^(%-?%d+) (%-?%d+)$')
  return {tonumber(credits_text), tonumber(last_text)}
end
