-- The front-door benchmark's wrk script: GET /work?user=<tag><n>, n cycling over <keys> users (each
-- thread starting at a different one), and a count of the answers by status.
--   wrk -t2 -c64 -d20s -s front-door.lua http://127.0.0.1:8080 -- 1000 u
-- done() prints one line, which ratelimit-bench/front-door.sh reads:
--   front-door: requests=.. seconds=.. rps=.. p50_us=.. p99_us=.. 2xx=.. 429=.. other=.. socket_errors=..
-- Counting needs response(), which makes wrk hand every answer to Lua: a little client CPU, the
-- same for every row.

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  local keys = tonumber(args[1]) or 1000
  local tag = args[2] or "u"
  paths = {}
  for i = 1, keys do
    paths[i] = wrk.format("GET", "/work?user=" .. tag .. i) -- formatted once, not per request
  end
  at = (id * 7919) % keys -- a prime stride: the threads start apart
  ok, limited, other = 0, 0, 0
end

function request()
  at = at % #paths + 1
  return paths[at]
end

function response(status, headers, body)
  if status >= 200 and status < 300 then
    ok = ok + 1
  elseif status == 429 then
    limited = limited + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local ok, limited, other = 0, 0, 0
  for _, thread in ipairs(threads) do
    ok = ok + thread:get("ok")
    limited = limited + thread:get("limited")
    other = other + thread:get("other")
  end
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format("front-door: requests=%d seconds=%.3f rps=%.1f p50_us=%d p99_us=%d 2xx=%d 429=%d"
      .. " other=%d socket_errors=%d\n", summary.requests, seconds, summary.requests / seconds,
      latency:percentile(50), latency:percentile(99), ok, limited, other,
      e.connect + e.read + e.write + e.timeout))
end
