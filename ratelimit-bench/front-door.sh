#!/usr/bin/env bash
# The front-door benchmark (docs/benchmarks.md, "Front doors over HTTP"): the application of ratelimit-bench/front-door
# (Tomcat, GET /work?user=N) behind each limiter in turn, driven over loopback by wrk; one Markdown
# table per round and one of the medians. Builds once, starts its own redis-server on a free loopback
# port, starts and stops the application once per row, and stops (by PID) only what it started.
# Run from anywhere, on a machine doing nothing else. Needs java, wrk, redis-server (Redis rows), curl.
#   ratelimit-bench/front-door.sh                                    # 7 rows x 3 rounds: about 35 minutes
#   ratelimit-bench/front-door.sh --seconds 3 --warmup 2 --rounds 1  # a smoke run: does it work?
#   ratelimit-bench/front-door.sh --policy 1000000/60s               # the mostly-allowed variant
set -euo pipefail
command_line="ratelimit-bench/front-door.sh${*:+ $*}"
cd "$(dirname "$0")/.."
# shellcheck source=front-door-common.sh
source ratelimit-bench/front-door-common.sh

all_rows=(none filter-memory annotation-memory filter-redis annotation-redis bucket4j-memory bucket4j-redis)
rows=("${all_rows[@]}")
seconds=20 warmup=60 rounds=3 connections=64 threads=2 keys=1000 policy=100/60s near_cache=false build=true
java_opts=${FRONT_DOOR_JAVA_OPTS:--Xms512m -Xmx512m}
out=ratelimit-bench/target/front-door
jar=ratelimit-bench/front-door/target/front-door.jar
lua=ratelimit-bench/front-door/front-door.lua

usage() {
  cat <<EOF
usage: ratelimit-bench/front-door.sh [options]
  --seconds N       measured seconds per row (default $seconds)
  --warmup N        warm-up seconds per row, on other user keys (default $warmup)
  --rounds N        rounds; each runs every row once (default $rounds)
  --connections N   wrk's keep-alive connections (default $connections)
  --threads N       wrk's threads (default $threads)
  --keys N          user keys the requests cycle over (default $keys)
  --policy N/W      the per-user policy, e.g. 100/60s, 100/1m (default $policy)
  --rows A,B,..     rows to run (default: ${all_rows[*]})
  --near-cache      our near-cache on (default off: every check on Redis goes to Redis)
  --no-build        use the jar already built ($jar)
JVM options of the application: FRONT_DOOR_JAVA_OPTS (default "$java_opts").
EOF
}

parse_options "$@"

needs_redis=false
for row in "${rows[@]}"; do [[ $row == *-redis ]] && needs_redis=true; done
need_tools java wrk curl $($needs_redis && echo redis-server)

if $build || [[ ! -f $jar ]]; then
  ./mvnw -B -q -pl ratelimit-bench/front-door -am -DskipTests package
fi
mkdir -p "$out"

redis_url=
if $needs_redis; then
  start_redis
fi

versions=
declare -A rps p50 p99 ok limited
warnings=()

# One row: start the application in that mode, wait until it answers, warm it up on other user keys,
# measure, stop it. Sets rps/p50/p99/ok/limited[round,row].
run_row() {
  local round=$1 row=$2 port log pid line
  log=$out/round$round-$row.log
  # a port found free may be taken before the application binds it (other processes on the
  # machine pick ports too): then try another, three times at most
  for attempt in 1 2 3; do
    port=$(free_port)
    # shellcheck disable=SC2086 # java_opts is a list of options
    java $java_opts -jar "$jar" --server.port="$port" --bench.mode="$row" --bench.policy="$policy" \
      --bench.near-cache="$near_cache" --bench.key-prefix="fd-$round-$row" ${redis_url:+--bench.redis-url=$redis_url} \
      > "$log" 2>&1 &
    pid=$!
    started+=("$pid")
    for _ in $(seq 1 600); do
      grep -q '^front-door ready' "$log" && break
      kill -0 "$pid" 2> /dev/null || break
      sleep 0.2
    done
    grep -q '^front-door ready' "$log" && break
    kill "$pid" 2> /dev/null; wait "$pid" 2> /dev/null
    grep -q "Port $port was already in use" "$log" || break
  done
  if ! grep -q '^front-door ready' "$log"; then
    echo "the application did not start in mode $row; its log:" >&2
    tail -30 "$log" >&2
    exit 1
  fi
  [[ -n $versions ]] || versions=$(grep -m1 '^front-door ready' "$log" | grep -o 'spring-boot=.*')
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/work?user=probe")
  [[ $code == 200 ]] || { echo "mode $row: GET /work answered $code, not 200" >&2; exit 1; }

  measure "$round" "$row" "$port" "$pid" "$log" "$([[ $row != none ]] && echo true || echo false)"
}

ratio() { # ROUND ROW: req/s against the no-limiter row of the same round
  if [[ -n ${rps[$1,none]:-} ]]; then awk -v a="${rps[$1,$2]}" -v b="${rps[$1,none]}" 'BEGIN { printf "%.2f", a / b }'; else echo n/a; fi
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run_rounds

{
  echo "## Front-door benchmark"
  echo
  echo "- $(date -u '+%Y-%m-%d %H:%M UTC'); $(uname -srm); $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs;" \
    "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $(java -version 2>&1 | head -1); ${versions//=/ }; $(redis-server --version 2> /dev/null | cut -d' ' -f1-3 || true);" \
    "$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
  echo "- \`$command_line\`"
  echo "- each row: the application alone in its JVM (\`$java_opts\`), Tomcat on 127.0.0.1, GET /work?user=N;" \
    "wrk -t$threads -c$connections (keep-alive) for ${seconds} s over $keys user keys, after ${warmup} s on $keys others;" \
    "policy $policy per user (a 429 once a user's quota is spent, so 2xx and 429 say what was measured);" \
    "Redis rows: near-cache $([[ $near_cache == true ]] && echo on || echo off), fresh keys per row"
  echo "- latency is wrk's (closed loop: each connection waits for its answer); ratios are within a round"
  print_tables 17
} | tee "$out/report.md"
echo "raw output in $out" >&2
