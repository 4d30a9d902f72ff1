#!/usr/bin/env bash
# The soak: the real server jar in its own process under a steady, moderate load from the load
# generator for a long time (30 minutes by default), to show that nothing grows without bound.
# Every interval (10 s) it records the server's heap after GC (from its GC log), its RSS
# (/proc/PID/status VmRSS) and, from the generator, that interval's p99 latency and deliveries/s.
# At the end, SoakReport writes soak-samples.csv, soak.png and soak-summary.md into the output
# directory and decides PASS or FAIL. Builds the jars when missing or older than the sources.
# See docs/operations.md ("Soak").
#
# Usage: scripts/soak.sh [--minutes N] [--out DIR]
#   --minutes N  measured minutes of load, after a 30 s warm-up (default 30)
#   --out DIR    where everything goes (default benchmark/target/soak-<UTC timestamp>)
# Environment: RATE (publishes/s, default 2000), SUBSCRIBERS (default 100), TOPICS (default 100),
#              PAYLOAD_BYTES (default 200), WARMUP (default 30s), INTERVAL (default 10s),
#              HEAP (the server's -Xms/-Xmx, default 512m), SERVER_OPTS (more server JVM flags),
#              PORT (default: the first free from 18090), SKIP_BUILD=1 (use the jars as they are).
# Exit codes: 0 PASS; 1 FAIL (something grew past its margin, or a value was lost, duplicated or
#             reordered); 2 bad command line; 3 the soak could not be run.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh

minutes=30
out=
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) minutes=${2:?--minutes needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    *) echo "unknown option: $1 (usage: $0 [--minutes N] [--out DIR])"; exit 2 ;;
  esac
done
case $minutes in
  ''|*[!0-9]*|0) echo "--minutes: a whole number of minutes, at least 1, was '$minutes'"; exit 2 ;;
esac
out=${out:-benchmark/target/soak-$(date -u +%Y%m%d-%H%M%S)}
rate=${RATE:-2000}
subscribers=${SUBSCRIBERS:-100}
topics=${TOPICS:-100}
payload_bytes=${PAYLOAD_BYTES:-200}
warmup=${WARMUP:-30s}
interval=${INTERVAL:-10s}
heap=${HEAP:-512m}

server_jar=server/target/ringcast-server.jar
bench_jar=benchmark/target/ringcast-bench.jar
if [ -z "${SKIP_BUILD:-}" ] && { [ ! -f "$server_jar" ] || [ ! -f "$bench_jar" ] || [ -n "$(find pom.xml */pom.xml \
      protocol/src/main server/src/main client-java/src/main benchmark/src/main -newer "$bench_jar" -print -quit)" ]; }; then
  echo "building $server_jar and $bench_jar"
  mvn -B -q -ntp -pl server,benchmark -am package -DskipTests
fi

# a port nobody listens on: connecting to it fails
port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -n "${PORT:-}" ]; then
  port=$PORT
else
  port=
  for candidate in $(seq 18090 18190); do
    if port_is_free "$candidate"; then port=$candidate; break; fi
  done
  if [ -z "$port" ]; then echo "no free port in 18090..18190"; exit 3; fi
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
server_pid=
sampler_pid=
cleanup() {
  if [ -n "$sampler_pid" ]; then kill "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; fi
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

# The server: demo publisher off (it would add its own load), anonymous sessions allowed to publish
# and subscribe everywhere (the generator's clients carry no credentials), everything else at its default.
cat > "$out/server.yaml" <<EOF
server:
  host: 127.0.0.1
  port: $port
demo:
  enabled: false
security:
  anonymousRoles: ["everything"]
  roles:
    - name: "everything"
      subscribe: ["#"]
      publish: ["#"]
EOF
# -Xms = -Xmx and AlwaysPreTouch: the whole heap is resident from the start, so RSS that grows later
# is native memory (direct buffers, metaspace, code cache, threads), not the heap being touched for
# the first time; the heap itself is watched through the GC log. timemillis: wall-clock stamps, to
# line GC pauses up with the generator's intervals.
server_flags=(-Xms"$heap" -Xmx"$heap" -XX:+AlwaysPreTouch "-Xlog:gc:file=$out/gc.log:timemillis")
# shellcheck disable=SC2206 # SERVER_OPTS is a list of flags, split on spaces on purpose
server_flags+=(${SERVER_OPTS:-})
echo "java ${server_flags[*]} -jar $server_jar --config $out/server.yaml" > "$out/server-command.txt"
java "${server_flags[@]}" -jar "$server_jar" --config "$out/server.yaml" > "$out/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  if grep -q 'Ringcast listening on' "$out/server.log"; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$out/server.log"; echo "server did not start"; exit 3; fi
  sleep 0.1 # polling the server's log for its start line; there is nothing to wait on
done
grep -q 'Ringcast listening on' "$out/server.log" || { echo "server did not listen within 30 s"; exit 3; }

# The sampler: the server's resident set every INTERVAL, stamped with the wall clock (ms).
interval_s=${interval%s}
case $interval_s in ''|*[!0-9]*) echo "INTERVAL: whole seconds such as 10s, was '$interval'"; exit 2 ;; esac
echo "epochMs,rssKiB" > "$out/rss.csv"
(
  while kill -0 "$server_pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status" 2>/dev/null || true)
    if [ -n "$rss" ]; then echo "$(date +%s%3N),$rss" >> "$out/rss.csv"; fi
    sleep "$interval_s" # the sampling period itself
  done
) &
sampler_pid=$!

machine_info "soak ${minutes} min" > "$out/machine.txt"
echo "soak: ${minutes} min at ${rate}/s, ${subscribers} subscribers, ${topics} topics against" \
  "ws://127.0.0.1:$port/ws (server pid $server_pid), results in $out"
generator_exit=0
java -jar "$bench_jar" --servers "ws://127.0.0.1:$port/ws" --subscribers "$subscribers" --topics "$topics" \
  --payload-bytes "$payload_bytes" --rate "$rate" --warmup "$warmup" --duration "${minutes}m" \
  --report-interval "$interval" --out "$out/generator" 2>&1 | tee "$out/generator.log" || generator_exit=${PIPESTATUS[0]}

# one last reading with the load stopped but the server still up, then stop both
rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status" 2>/dev/null || true)
if [ -n "$rss" ]; then echo "$(date +%s%3N),$rss" >> "$out/rss.csv"; fi
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=
kill "$server_pid"
wait "$server_pid" || true
server_pid=

if [ "$generator_exit" -ge 2 ]; then
  echo "the load generator could not run (exit $generator_exit): see $out/generator.log"
  exit 3
fi
report_exit=0
java -cp "$bench_jar" io.ringcast.benchmark.soak.SoakReport --dir "$out" --generator-exit "$generator_exit" \
  || report_exit=$?
echo "results: $out (soak-summary.md, soak.png, soak-samples.csv)"
exit $report_exit
