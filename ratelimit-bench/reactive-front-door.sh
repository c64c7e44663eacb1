#!/usr/bin/env bash
# The reactive front-door benchmark (docs/benchmarks.md, "Reactive front doors over HTTP"): the WebFlux
# example (examples/webflux-demo, Reactor Netty, GET /work?user=N) behind our reactive filter on Redis,
# and the gateway example (examples/gateway-demo, Spring Cloud Gateway) on the same route to that
# application, limited by our PolicyRateLimiter or by the gateway's own RedisRateLimiter at the same
# rate; driven over loopback by wrk (ratelimit-bench/front-door/front-door.lua); one Markdown table per
# round and one of the medians. Builds once, starts its own redis-server on a free loopback port (and
# empties it before each row), starts the backend once and each row's application once per row, and
# stops (by PID) only what it started. Run from anywhere, on a machine doing nothing else. Needs java,
# wrk, redis-server, curl.
#   ratelimit-bench/reactive-front-door.sh                                    # 5 rows x 3 rounds: about 25 minutes
#   ratelimit-bench/reactive-front-door.sh --seconds 3 --warmup 2 --rounds 1  # a smoke run: does it work?
set -euo pipefail
command_line="ratelimit-bench/reactive-front-door.sh${*:+ $*}"
cd "$(dirname "$0")/.."
# shellcheck source=front-door-common.sh
source ratelimit-bench/front-door-common.sh

all_rows=(webflux-none webflux-filter-redis gateway-none gateway-policy-redis gateway-redis-rate-limiter)
rows=("${all_rows[@]}")
seconds=20 warmup=60 rounds=3 connections=64 threads=2 keys=1000 policy=100/60s near_cache=false build=true
java_opts=${FRONT_DOOR_JAVA_OPTS:--Xms512m -Xmx512m}
out=ratelimit-bench/target/reactive-front-door
webflux_jar=examples/webflux-demo/target/webflux-demo.jar
gateway_jar=examples/gateway-demo/target/gateway-demo.jar
lua=ratelimit-bench/front-door/front-door.lua

usage() {
  cat <<EOF
usage: ratelimit-bench/reactive-front-door.sh [options]
  --seconds N       measured seconds per row (default $seconds)
  --warmup N        warm-up seconds per row, on other user keys (default $warmup)
  --rounds N        rounds; each runs every row once (default $rounds)
  --connections N   wrk's keep-alive connections (default $connections)
  --threads N       wrk's threads (default $threads)
  --keys N          user keys the requests cycle over (default $keys)
  --policy N/W      the per-user policy, e.g. 100/60s, 100/1m (default $policy); the gateway's
                    RedisRateLimiter gets the same rate and burst: N tokens a W-second, W a request
  --rows A,B,..     rows to run (default: ${all_rows[*]})
  --near-cache      our near-cache on (default off: every check on Redis goes to Redis)
  --no-build        use the jars already built ($webflux_jar, $gateway_jar)
JVM options of the application: FRONT_DOOR_JAVA_OPTS (default "$java_opts").
EOF
}

parse_options "$@"

[[ $window_s =~ ^[1-9][0-9]*$ ]] || { echo "--policy needs a window of whole seconds (the RedisRateLimiter's unit), was '$policy'" >&2; exit 2; }
needs_redis=true
need_tools java wrk curl redis-server

if $build || [[ ! -f $webflux_jar ]] || [[ ! -f $gateway_jar ]]; then
  ./mvnw -B -q -pl examples/webflux-demo,examples/gateway-demo -am -DskipTests package
fi
mkdir -p "$out"

start_redis



declare -A rps p50 p99 ok limited
warnings=()

redis_flush() { # the server is this script's own: each row starts on an empty one
  (exec 3<> "/dev/tcp/127.0.0.1/$redis_port" && printf 'FLUSHALL\r\n' >&3 && read -r -t 5 _ <&3)
}

# start_app LOG JAR ARGS..: starts java -jar JAR on a free port; sets app_pid and app_port once
# GET /work answers (any status), or exits. A port found free may be taken before the application binds
# it: then another, three times at most.
start_app() {
  local log=$1 jar=$2 code
  shift 2
  for attempt in 1 2 3; do
    app_port=$(free_port)
    # shellcheck disable=SC2086 # java_opts is a list of options
    java $java_opts -jar "$jar" --server.port="$app_port" --server.address=127.0.0.1 "$@" > "$log" 2>&1 &
    app_pid=$!
    started+=("$app_pid")
    for _ in $(seq 1 600); do
      code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$app_port/work?user=probe" || true)
      [[ $code != 000 ]] && return 0
      kill -0 "$app_pid" 2> /dev/null || break
      sleep 0.2
    done
    stop "$app_pid"
    grep -q "Port $app_port was already in use" "$log" || break
  done
  echo "the application did not start ($jar $*); its log:" >&2
  tail -30 "$log" >&2
  exit 1
}

# One row: empty Redis, start the row's application, wait until it answers, warm it up on other user
# keys, measure, stop it. Sets rps/p50/p99/ok/limited[round,row].
run_row() {
  local round=$1 row=$2 port log pid line code
  log=$out/round$round-$row.log
  redis_flush
  local -a policy_args=(--ratelimit.policies.work.limit="$limit" --ratelimit.policies.work.window="${window_s}s"
    --ratelimit.redis.url="$redis_url" --ratelimit.backend=redis --ratelimit.near-cache="$near_cache"
    --ratelimit.redis.key-prefix="rfd-$round-$row")
  case $row in
    webflux-none) start_app "$log" "$webflux_jar" --ratelimit.filter.enabled=false "${policy_args[@]}" ;;
    webflux-filter-redis) start_app "$log" "$webflux_jar" "${policy_args[@]}" ;;
    gateway-none) start_app "$log" "$gateway_jar" --spring.profiles.active=no-limit --demo.backend-url="$backend" \
      "${policy_args[@]}" ;;
    gateway-policy-redis) start_app "$log" "$gateway_jar" --demo.backend-url="$backend" "${policy_args[@]}" ;;
    gateway-redis-rate-limiter) start_app "$log" "$gateway_jar" --spring.profiles.active=redis-rate-limiter \
      --demo.backend-url="$backend" --demo.replenish-rate="$limit" --demo.requested-tokens="$window_s" \
      --demo.burst-capacity="$((limit * window_s))" "${policy_args[@]}" ;;
  esac
  pid=$app_pid port=$app_port
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/work?user=probe")
  [[ $code == 200 ]] || { echo "row $row: GET /work answered $code, not 200" >&2; exit 1; }

  measure "$round" "$row" "$port" "$pid" "$log" "$([[ $row != *-none ]] && echo true || echo false)"
}

ratio() { # ROUND ROW: req/s against the no-limiter row of its family (webflux-*, gateway-*) in the same round
  local base=${2%%-*}-none
  if [[ -n ${rps[$1,$base]:-} ]]; then awk -v a="${rps[$1,$2]}" -v b="${rps[$1,$base]}" 'BEGIN { printf "%.2f", a / b }'; else echo n/a; fi
}

# the gateway rows' backend: the WebFlux example without a limit, started once, on its own CPU time
# as any backend is
start_app "$out/backend.log" "$webflux_jar" --ratelimit.filter.enabled=false
backend=http://127.0.0.1:$app_port

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run_rounds

{
  echo "## Reactive front-door benchmark"
  echo
  echo "- $(date -u '+%Y-%m-%d %H:%M UTC'); $(uname -srm); $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs;" \
    "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $(java -version 2>&1 | head -1); $(redis-server --version 2> /dev/null | cut -d' ' -f1-3 || true);" \
    "$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
  echo "- \`$command_line\`"
  echo "- each row: the application alone in its JVM (\`$java_opts\`), Reactor Netty on 127.0.0.1, GET /work?user=N" \
    "(gateway rows: Spring Cloud Gateway routing to the WebFlux example without a limit, started once);" \
    "wrk -t$threads -c$connections (keep-alive) for ${seconds} s over $keys user keys, after ${warmup} s on $keys others;" \
    "policy $policy per user (a 429 once a user's quota is spent, so 2xx and 429 say what was measured);" \
    "our rows: near-cache $([[ $near_cache == true ]] && echo on || echo off); Redis emptied before each row;" \
    "RedisRateLimiter: replenishRate=$limit, requestedTokens=$window_s, burstCapacity=$((limit * window_s))"
  echo "- latency is wrk's (closed loop: each connection waits for its answer); ratios are within a round"
  print_tables 26
} | tee "$out/report.md"
echo "raw output in $out" >&2
