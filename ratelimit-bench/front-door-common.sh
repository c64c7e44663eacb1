# Sourced by front-door.sh and reactive-front-door.sh: what both benchmarks do alike. It reads and
# sets the caller's globals: the options (parse_options), limit and window_s (parse_policy), out,
# started, redis_port and redis_url (start_redis), lua, and the rps/p50/p99/ok/limited arrays and
# warnings that measure fills; the caller defines usage, run_row and ratio.

# policy N/W -> limit and window_s, for the check that no row admitted more than it allows
parse_policy() {
  read -r limit window_s < <(awk -v spec="$policy" 'BEGIN {
    if (!match(spec, /^[0-9]+\/[0-9]*(ms|s|m|h|d)$/)) exit 1
    split(spec, p, "/"); unit = p[2]; sub(/^[0-9]*/, "", unit); n = p[2]; sub(/[a-z]+$/, "", n); if (n == "") n = 1
    f = unit == "ms" ? 0.001 : unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 86400
    print p[1], n * f }') || { echo "--policy must be N/W such as 100/60s or 100/1m, was '$policy'" >&2; exit 2; }
}

# parse_options ARG...: the options both scripts take (usage is the caller's), into seconds, warmup,
# rounds, connections, threads, keys, policy (then limit, window_s), rows, near_cache and build
parse_options() {
  local row
  while (($#)); do
    case $1 in
      --seconds | --warmup | --rounds | --connections | --threads | --keys)
        [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "$1 needs a whole number of at least 1, was '${2:-}'" >&2; exit 2; }
        declare -g "${1#--}=$2"; shift 2 ;;
      --policy) policy=${2:?--policy needs N/W, e.g. 100/60s}; shift 2 ;;
      --rows) IFS=, read -ra rows <<< "${2:?--rows needs a comma-separated list}"; shift 2 ;;
      --near-cache) near_cache=true; shift ;;
      --no-build) build=false; shift ;;
      -h | --help) usage; exit 0 ;;
      *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
  done
  for row in "${rows[@]}"; do
    [[ " ${all_rows[*]} " == *" $row "* ]] || { echo "unknown row '$row'; rows: ${all_rows[*]}" >&2; exit 2; }
  done
  parse_policy
}

need_tools() { # TOOL...: each on PATH, or exit
  local tool
  for tool in "$@"; do
    command -v "$tool" > /dev/null || { echo "$tool is not on PATH${tool/wrk/ (Debian: apt-get install -y wrk)}" >&2; exit 1; }
  done
}

# Processes this script started, stopped by PID when it exits, however it exits.
started=()
stop() { # PID: SIGTERM, wait for it, and forget it (its number may be reused)
  kill "$1" 2> /dev/null || true
  wait "$1" 2> /dev/null || true
  local keep=() pid
  for pid in ${started[@]+"${started[@]}"}; do [[ $pid == "$1" ]] || keep+=("$pid"); done
  started=(${keep[@]+"${keep[@]}"})
}
cleanup() { for pid in ${started[@]+"${started[@]}"}; do stop "$pid"; done; }
trap cleanup EXIT

free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then echo "$port"; return; fi
  done
  echo "no free loopback port found" >&2
  return 1
}

start_redis() { # a redis-server of this script's own on a free loopback port: sets redis_port, redis_url
  local redis_pid reply
  redis_port=$(free_port)
  redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --daemonize no \
    --dir "$out" > "$out/redis.log" 2>&1 &
  redis_pid=$!
  started+=("$redis_pid")
  redis_url=
  for _ in $(seq 1 100); do
    if (exec 3<> "/dev/tcp/127.0.0.1/$redis_port" && printf 'PING\r\n' >&3 && read -r -t 2 reply <&3 \
        && [[ $reply == +PONG* ]]) 2> /dev/null; then
      redis_url=redis://127.0.0.1:$redis_port
      break
    fi
    kill -0 "$redis_pid" 2> /dev/null || break
    sleep 0.1
  done
  [[ -n $redis_url ]] || { echo "redis-server did not start; its log:" >&2; tail -20 "$out/redis.log" >&2; exit 1; }
}

# measure ROUND ROW PORT PID LOG LIMITED: warm up on other user keys, measure, stop PID; sets
# rps/p50/p99/ok/limited[ROUND,ROW]. LIMITED (true/false): whether the row has a limiter, whose 2xx
# must not exceed what the policy admits.
measure() {
  local round=$1 row=$2 port=$3 pid=$4 log=$5 limiter=$6 line field most
  wrk -t"$threads" -c"$connections" -d"${warmup}s" --timeout 5s -s "$lua" "http://127.0.0.1:$port" -- "$keys" w >> "$log" 2>&1
  line=$(wrk -t"$threads" -c"$connections" -d"${seconds}s" --timeout 5s -s "$lua" "http://127.0.0.1:$port" \
    -- "$keys" u 2>&1 | tee -a "$log" | grep '^front-door:') \
    || { echo "wrk printed no result for $row; see $log" >&2; exit 1; }
  stop "$pid"

  local -A r
  for field in ${line#front-door: }; do r[${field%%=*}]=${field#*=}; done
  rps[$round,$row]=${r[rps]} p50[$round,$row]=${r[p50_us]} p99[$round,$row]=${r[p99_us]}
  ok[$round,$row]=${r[2xx]} limited[$round,$row]=${r[429]}
  if ((r[other] + r[socket_errors] > 0)); then
    warnings+=("round $round, $row: ${r[other]} answers neither 2xx nor 429, ${r[socket_errors]} socket errors (see $log)")
  fi
  # each fresh key admits at most limit + limit * seconds / window; more means the limiter let
  # requests through undecided (failed open)
  most=$(awk -v k="$keys" -v l="$limit" -v s="${r[seconds]}" -v w="$window_s" 'BEGIN { printf "%d", k * l * (1 + s / w) * 1.02 + 10 }')
  if $limiter && ((r[2xx] > most)); then
    warnings+=("round $round, $row: ${r[2xx]} answers 2xx, more than the policy admits ($most): did the limiter fail open? (see $log)")
  fi
}

ms() { awk -v us="$1" 'BEGIN { printf "%.2f ms", us / 1000 }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.6g", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

run_rounds() { # every row of every round, each through run_row ROUND ROW
  local round row i order
  for round in $(seq 1 "$rounds"); do
    order=("${rows[@]}")
    if ((round % 2 == 0)); then # every other round backwards, so that no row always runs first or last
      order=()
      for ((i = ${#rows[@]} - 1; i >= 0; i--)); do order+=("${rows[i]}"); done
    fi
    for row in "${order[@]}"; do
      echo "round $round/$rounds: $row (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
      run_row "$round" "$row"
    done
  done
}

# print_tables WIDTH: each round's table, the medians' table and the warnings; WIDTH is the row
# column's width; ratio ROUND ROW is the caller's (what each row is compared with)
print_tables() {
  local width=$1 round row ratio_median r a b c d q
  table_header() {
    printf "| %-${width}s |    req/s |        p50 |        p99 |       2xx |       429 | vs no limiter |\n" row
    printf '|%s|---------:|-----------:|-----------:|----------:|----------:|--------------:|\n' \
      "$(printf -- '-%.0s' $(seq 1 $((width + 2))))"
  }
  for round in $(seq 1 "$rounds"); do
    echo
    echo "Round $round$( ((round % 2 == 0)) && echo ' (rows run bottom to top)')"
    echo
    table_header
    for row in "${rows[@]}"; do
      printf "| %-${width}s | %8.0f | %10s | %10s | %9d | %9d | %13s |\n" "$row" "${rps[$round,$row]}" \
        "$(ms "${p50[$round,$row]}")" "$(ms "${p99[$round,$row]}")" "${ok[$round,$row]}" "${limited[$round,$row]}" \
        "$(ratio "$round" "$row")"
    done
  done
  echo
  echo "Medians of $rounds round(s) (the ratio: the median of the rounds' ratios)"
  echo
  table_header
  for row in "${rows[@]}"; do
    r=() a=() b=() c=() d=() q=()
    for round in $(seq 1 "$rounds"); do
      r+=("${rps[$round,$row]}") a+=("${p50[$round,$row]}") b+=("${p99[$round,$row]}")
      c+=("${ok[$round,$row]}") d+=("${limited[$round,$row]}") q+=("$(ratio "$round" "$row")")
    done
    ratio_median=n/a
    [[ ${q[0]} != n/a ]] && ratio_median=$(awk -v m="$(median "${q[@]}")" 'BEGIN { printf "%.2f", m }')
    printf "| %-${width}s | %8.0f | %10s | %10s | %9.0f | %9.0f | %13s |\n" "$row" "$(median "${r[@]}")" \
      "$(ms "$(median "${a[@]}")")" "$(ms "$(median "${b[@]}")")" "$(median "${c[@]}")" "$(median "${d[@]}")" "$ratio_median"
  done
  if ((${#warnings[@]})); then
    echo
    printf -- '- WARNING: %s\n' "${warnings[@]}"
  fi
}
