-- TOKEN_BUCKET's reservations, twin of TokenBucket.java's reserved, giveBack and charge. The
-- bucket's equivalent tat is last + (B·W − credits)/L: a credit is 1/L µs of it.

-- The stored bucket as credits, last; nil when there is none (a full one).
local function token_bucket_read(stored)
  if not stored then
    return nil
  end
  local credits_text, last_text = string.match(stored, '^(%-?%d+) (%-?%d+)$')
  return tonumber(credits_text), tonumber(last_text)
end

-- The tokens at max(t, last), in credits, as a check counts them.
local function token_bucket_tokens(credits, last, t, capacity, limit)
  if not credits then
    return capacity
  end
  local elapsed = math.max(0, t - last)
  local missing = capacity - credits
  if missing > 0 and elapsed <= math.floor(missing / limit) then
    return credits + elapsed * limit
  end
  return capacity
end

local function token_bucket_write(key, credits, last, t, capacity, limit)
  set_px(key, string.format('%d %d', credits, last), ttl_ms(last + ceil_div(math.max(0, capacity - credits), limit) - t))
end

-- Mark: as GCRA's, tat + given.
local function token_bucket_reserved(keys, t, window, limit, burst, ledger_key, id)
  local credits, last = token_bucket_read(get(keys[1]))
  local missing = burst * window - credits -- >= 0 after a check
  return ledger_reserve_tat(ledger_key, id, t, last + math.floor(missing / limit), missing % limit, limit)
end

-- Refills to max(t, last), then adds what ledger_credit allows; never past capacity.
local function token_bucket_give_back(keys, t, units, window, limit, burst, at, frac, ledger_key, id)
  local credits, last = token_bucket_read(get(keys[1]))
  local ledger = ledger_read(ledger_key)
  if not credits or not ledger_holds(ledger, id, t) then
    return
  end
  local now = math.max(t, last)
  local g = ledger_credit(ledger, at, frac, now, units, window, limit)
  if g > 0 then
    local capacity = burst * window
    credits = math.min(capacity, token_bucket_tokens(credits, last, t, capacity, limit) + g)
    ledger_given(ledger, g, limit)
    ledger_save(ledger_key, ledger)
    set_keep_ttl(keys[1], string.format('%d %d', credits, now)) -- a give-back never needs a longer life
  end
end

-- Refills to max(t, last), then takes units·W credits whatever the limit, down to -2^52.
local function token_bucket_charge(keys, t, units, window, limit, burst)
  local credits, last = token_bucket_read(get(keys[1]))
  local capacity = burst * window
  local tokens = token_bucket_tokens(credits, last, t, capacity, limit)
  local now = t
  if last then
    now = math.max(t, last)
  end
  local taken = math.min(units, math.floor(MAX_COUNT / window)) * window
  token_bucket_write(keys[1], math.max(-MAX_COUNT, tokens - taken), now, t, capacity, limit)
end
