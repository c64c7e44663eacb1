-- GCRA and LEAKY_BUCKET: the theoretical arrival time tat = tat_us + tat_frac/L (0 <= frac < L),
-- exact, with T = W/L = q + r/L. LEAKY_BUCKET admits as GCRA and adds delay = tat − t.
-- Twin of Gcra.java. keys[1]: "tat_us tat_frac". A bare "tat_us" (fraction 0) is read too, so that
-- a later version may write it; this one keeps writing both numbers, which every earlier version
-- reads (instances of two versions share keys during a rolling upgrade).

-- The last stored text gcra_read parsed, and its numbers: a denial reads its state again for the
-- near-cache, and a batch may check a key many times (tonumber of a 16-digit time is not cheap).
local read_text, read_us, read_frac

-- The stored tat as us, frac; nil when there is none. One match reads both forms.
local function gcra_read(stored)
  if not stored then
    return nil
  end
  if stored ~= read_text then
    local us_text, frac_text = string.match(stored, '^(%-?%d+) ?(%d*)$')
    read_text, read_us, read_frac = stored, tonumber(us_text), tonumber(frac_text) or 0
  end
  return read_us, read_frac
end

-- How many cost-1 checks would pass now, given tat − B·T = au + af/L: floor((t − (tat − B·T)) / T),
-- at least 0.
local function gcra_available_since(t, au, af, limit, window)
  local scaled = (t - au) * limit - af
  if scaled <= 0 then
    return 0
  end
  return math.floor(scaled / window)
end

-- How many cost-1 checks would pass now, for a tat of tu + tf/L.
local function gcra_available(t, tu, tf, limit, burst, q, r, window)
  local af = tf - burst * r
  local au = tu - burst * q
  if af < 0 or af >= limit then
    au = au + math.floor(af / limit)
    af = af % limit
  end
  return gcra_available_since(t, au, af, limit, window)
end

-- ceil(tat − t) for a tat of us + frac/L.
local function gcra_reset_after(us, frac, t)
  if frac > 0 then
    return us - t + 1
  end
  return us - t
end

local function gcra(keys, t, c, window, limit, burst, apply, name)
  local q = math.floor(window / limit) -- T = q + r/L
  local r = window % limit
  -- tat = max(stored, t)
  local tu, tf = gcra_read(get(keys[1]))
  if not tu or tu < t then
    tu, tf = t, 0
  end
  -- new = tat + c·T (the fraction carries into whole µs only when it reaches L)
  local nf = tf + c * r
  local nu = tu + c * q
  if nf >= limit then
    nu = nu + math.floor(nf / limit)
    nf = nf % limit
  end
  -- allowAt = new − B·T, normalised so that 0 <= af < L
  local af = nf - burst * r
  local au = nu - burst * q
  if af < 0 or af >= limit then
    au = au + math.floor(af / limit)
    af = af % limit
  end
  if au < t or (au == t and af == 0) then
    local delay = 0
    if name == 'leaky_bucket' then
      delay = gcra_reset_after(tu, tf, t) -- tat − t
    end
    if not apply then
      return 1, gcra_available(t, tu, tf, limit, burst, q, r, window), 0, gcra_reset_after(tu, tf, t), delay
    end
    local reset_after = gcra_reset_after(nu, nf, t)
    set_px(keys[1], string.format('%d %d', nu, nf), ttl_ms(reset_after))
    -- available at t after new: new − B·T is allowAt, computed above
    return 1, gcra_available_since(t, au, af, limit, window), 0, reset_after, delay
  end
  local retry_after = au - t
  if af > 0 then
    retry_after = retry_after + 1
  end
  return 0, gcra_available(t, tu, tf, limit, burst, q, r, window), retry_after, gcra_reset_after(tu, tf, t), 0
end

-- The state as StateSnapshots reads it: {tat_us, tat_frac}; a missing tat is t.
local function gcra_state(keys, t, window, limit, burst)
  local tu, tf = gcra_read(get(keys[1]))
  if not tu then
    return {t, 0}
  end
  return {tu, tf}
end
