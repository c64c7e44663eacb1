-- GCRA and LEAKY_BUCKET: the theoretical arrival time tat = tat_us + tat_frac/L (0 <= frac < L),
-- exact, with T = W/L = q + r/L. LEAKY_BUCKET admits as GCRA and adds delay = tat − t.
-- Twin of Gcra.java. keys[1]: "tat_us tat_frac".

-- How many cost-1 checks would pass now: floor((t − (tat − B·T)) / T), at least 0.
local function gcra_available(t, tu, tf, limit, burst, q, r, window)
  local af = tf - burst * r
  local au = tu - burst * q + math.floor(af / limit)
  af = af % limit
  local scaled = (t - au) * limit - af
  if scaled <= 0 then
    return 0
  end
  return math.floor(scaled / window)
end

local function gcra(keys, t, c, window, limit, burst, apply, name)
  local shaping = name == 'leaky_bucket'
  local q = math.floor(window / limit)
  local r = window % limit
  -- tat = max(stored, t)
  local tu, tf = t, 0
  local stored = get(keys[1])
  if stored then
    local us_text, frac_text = string.match(stored, '^(%-?%d+) (%d+)$')
    local us = tonumber(us_text)
    if us >= t then
      tu, tf = us, tonumber(frac_text)
    end
  end
  -- new = tat + c·T
  local nf = tf + c * r
  local nu = tu + c * q + math.floor(nf / limit)
  nf = nf % limit
  -- allowAt = new − B·T, normalised so that 0 <= af < L
  local af = nf - burst * r
  local au = nu - burst * q + math.floor(af / limit)
  af = af % limit
  local reset_now = tu - t + ((tf > 0) and 1 or 0)
  if au < t or (au == t and af == 0) then
    local delay = 0
    if shaping then
      delay = reset_now
    end
    if not apply then
      return 1, gcra_available(t, tu, tf, limit, burst, q, r, window), 0, reset_now, delay
    end
    local reset_after = nu - t + ((nf > 0) and 1 or 0)
    set_px(keys[1], string.format('%d %d', nu, nf), ttl_ms(reset_after))
    return 1, gcra_available(t, nu, nf, limit, burst, q, r, window), 0, reset_after, delay
  end
  local retry_after = au - t + ((af > 0) and 1 or 0)
  return 0, gcra_available(t, tu, tf, limit, burst, q, r, window), retry_after, reset_now, 0
end

-- The state as StateSnapshots reads it: {tat_us, tat_frac}; a missing tat is t.
local function gcra_state(keys, t, window, limit, burst)
  local stored = get(keys[1])
  if not stored then
    return {t, 0}
  end
  local us_text, frac_text = string.match(stored, '^(%-?%d+) (%d+)$')
  return {tonumber(us_text), tonumber(frac_text)}
end
