#!/usr/bin/env bash
# Runs every measurement quoted in docs/benchmarks.md, one after another, and keeps the raw output
# in ratelimit-bench/target/report/. Run from the repository root on a machine doing nothing else;
# it starts (and stops) its own redis-server processes on free loopback ports.
#   ratelimit-bench/report.sh            # everything, about 35 minutes on 2 cores
#   ratelimit-bench/report.sh memory     # one part: memory, memory-forked, redis, cluster, hot, roundtrips, jmh, load,
#                                        # front-door, chart
set -euo pipefail
cd "$(dirname "$0")/.."
out=ratelimit-bench/target/report
jar=ratelimit-bench/target/benchmarks.jar
parts=("${@:-memory memory-forked redis cluster hot roundtrips jmh load front-door chart}")
parts=(${parts[@]})

if [[ ! -f $jar ]]; then
  ./mvnw -B -q -pl ratelimit-bench -am -DskipTests package
fi
mkdir -p "$out"
{ date -u; uname -srm; lscpu | grep -E 'Model name|^CPU\(s\)'; java -version 2>&1 | head -1; redis-server --version; uptime; } \
  > "$out/machine.txt"

# The medians table's rows of a memory-forked output: per algorithm, the median over the JVMs of the
# check ratio, the ratio against the probe and the tryAcquire ratio, and each one's range.
forked_summary() {
  echo
  echo "Over $2 JVMs per algorithm: median (min–max) of the JVMs' medians of rounds"
  echo "| algorithm      | check ratio       | ratio vs probe    | tryAcquire ratio  |"
  echo "|----------------|-------------------|-------------------|-------------------|"
  awk -F'|' '
    /^\| Medians/ || /^Medians/ { medians = 1; next }
    medians && $2 ~ /^ *[A-Z_]+ *$/ {
      a = $2; gsub(/ /, "", a)
      n[a]++; check[a, n[a]] = $6 + 0; probe[a, n[a]] = $12 + 0; acq[a, n[a]] = $14 + 0
      if (!(a in seen)) { seen[a] = 1; order[++count] = a }
    }
    /^Scaling/ { medians = 0 }
    function cell(v, a,   i, j, k, t, s) {
      k = n[a]
      for (i = 1; i <= k; i++) s[i] = v[a, i]
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
      return sprintf("%.2f (%.2f–%.2f)", k % 2 ? s[(k + 1) / 2] : (s[k / 2] + s[k / 2 + 1]) / 2, s[1], s[k])
    }
    END { for (i = 1; i <= count; i++) { a = order[i]
      printf "| %-14s | %-17s | %-17s | %-17s |\n", a, cell(check, a), cell(probe, a), cell(acq, a) } }
  ' "$1"
}

for part in "${parts[@]}"; do
  echo "== $part (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  case $part in
    memory)     java -cp $jar dev.ratelimit.bench.MemoryComparison --rounds 5 --warmup 20 | tee "$out/memory.txt" ;;
    memory-forked) # each algorithm in JVMs of its own, as JMH forks (a service runs one or two); the
                # same code measures up to ±15 % apart from one JVM to the next here (what the JIT
                # made of it, and the host), so each algorithm runs in $forks JVMs, taken in turns,
                # and the summary gives the median over the JVMs of each JVM's median of rounds
                forks=${FORKS:-3}
                rm -f "$out/memory-forked.txt"
                for f in $(seq 1 "$forks"); do
                  for a in FIXED_WINDOW SLIDING_LOG SLIDING_WINDOW TOKEN_BUCKET GCRA LEAKY_BUCKET; do
                    java -cp $jar dev.ratelimit.bench.MemoryComparison --rounds 5 --warmup 20 --algorithms $a \
                      --no-scaling | tee -a "$out/memory-forked.txt"
                  done
                done
                forked_summary "$out/memory-forked.txt" "$forks" | tee -a "$out/memory-forked.txt" ;;
    redis)      java -cp $jar dev.ratelimit.bench.RedisPeers --seconds 4 --rounds 3 | tee "$out/redis-peers.txt" ;;
    cluster)    java -cp $jar dev.ratelimit.bench.ReferenceWorkload --cluster --warmup 20 | tee "$out/reference.txt" ;;
    hot)        java -cp $jar dev.ratelimit.bench.HotDeniedKey --seconds 3 --rounds 3 | tee "$out/hot-denied-key.txt" ;;
    roundtrips) java -cp $jar dev.ratelimit.bench.RoundTrips | tee "$out/round-trips.txt" ;;
    jmh)        java -jar $jar CheckBenchmark -p algorithm=GCRA,SLIDING_LOG -p keys=1,1000 -f 1 -wi 3 -i 5 -t 1 -prof gc \
                  | tee "$out/jmh-1-thread.txt" ;;
    load)       rm -f examples/ratelimit-service/target/load-report.md
                ./mvnw -B -q -Pload -pl examples/ratelimit-service -am verify | tee "$out/load.txt"
                cp examples/ratelimit-service/target/load-report.md "$out/load-report.md" ;;
    front-door) # HTTP over loopback: Tomcat behind each limiter, driven by wrk (docs/benchmarks.md, "Front doors over HTTP")
                ratelimit-bench/front-door.sh | tee "$out/front-door.txt" ;;
    chart)      java -cp $jar dev.ratelimit.bench.AdmissionChart docs/admissions.svg | tee "$out/chart.txt" ;;
    *)          echo "unknown part: $part" >&2; exit 2 ;;
  esac
done
echo "raw output in $out"
