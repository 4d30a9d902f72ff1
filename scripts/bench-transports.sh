#!/usr/bin/env bash
# The native transports compared (docs/benchmarks.md, "Native transports"): the load generator
# against the real server jar started on each server.transport in turn (nio, epoll, io_uring,
# then again, ROUNDS times, so drift shows), the generator itself on one fixed transport. For each
# server, the POINTS (default: 100 subscribers at 10,000 publishes/s, then 1,000 subscribers at
# 1,000/s), one publisher, 1,000 topics of 200 B, 10 s warm-up and 15 s measured. With --client,
# the other side: the server on one transport, the generator's event loops on each in turn. Every run's JSON goes to OUT; the
# table (p50, p99, server CPU per delivery, loss, and what else the machine ran) to OUT/summary.md.
#
# Before each run it waits (up to QUIET_WAIT_S) until no other java process runs: the machine has
# 2 cores, and a build beside a run is the largest error there is. A run that another java process
# shared anyway (sampled every 2 s) is run again, up to ATTEMPTS times; the table lists every run,
# the shared ones marked, and its medians leave them out.
#
# Usage: scripts/bench-transports.sh [--client] [--quick]
#   --client  the server on SERVER_TRANSPORT (default epoll), the generator on nio, epoll, io_uring
#   --quick   2 s runs, one round: to check the script
# Environment: POINTS (SUBSCRIBERS:RATE ..., default "100:10000 1000:1000"),
#              ROUNDS (default 3), TRANSPORTS (default "nio epoll io_uring"), CLIENT_TRANSPORT (the
#              generator's, default nio), SERVER_TRANSPORT (with --client, default epoll), PORT
#              (default 18080), OUT (default load-results/transports or load-results/transports-client),
#              QUIET_WAIT_S (default 900), ATTEMPTS (runs of one point while others share it, default 3),
#              SKIP_BUILD=1 (use the jars as they are).
# Exit codes: 0 every run clean; 1 a value lost, duplicated or reordered; 2 bad command line; 3 a
#             server did not start (a transport this machine cannot run: see its log).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh
# shellcheck source=lib/bench_server.sh
. scripts/lib/bench_server.sh

side=server
quick=false
for arg in "$@"; do
  case $arg in
    --client) side=client ;;
    --quick) quick=true ;;
    *) echo "unknown option: $arg (see the usage at the top of $0)"; exit 2 ;;
  esac
done
rounds=${ROUNDS:-3}
points=${POINTS:-100:10000 1000:1000}
transports=${TRANSPORTS:-nio epoll io_uring}
client_transport=${CLIENT_TRANSPORT:-nio}
server_transport=${SERVER_TRANSPORT:-epoll}
port=${PORT:-18080}
quiet_wait_s=${QUIET_WAIT_S:-900}
attempts=${ATTEMPTS:-3}
if [ "$side" = client ]; then out=${OUT:-load-results/transports-client}; else out=${OUT:-load-results/transports}; fi
if $quick; then rounds=1; run_time=(--duration 2s --warmup 1s); else run_time=(--duration 15s --warmup 10s); fi

server_jar=server/target/ringcast-server.jar
bench_jar=benchmark/target/ringcast-bench.jar
if [ -z "${SKIP_BUILD:-}" ] && { [ ! -f "$server_jar" ] || [ ! -f "$bench_jar" ] || [ -n "$(find pom.xml */pom.xml \
      protocol/src/main server/src/main client-java/src/main benchmark/src/main -newer "$bench_jar" -print -quit)" ]; }; then
  echo "building $server_jar and $bench_jar"
  mvn -B -q -ntp -pl server,benchmark -am package -DskipTests
fi

rm -rf "$out"
mkdir -p "$out"
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

# the java processes that are not this script's (a build, another benchmark)
others() {
  pgrep -x java | grep -vx "${server_pid:-none}" | tr '\n' ' ' || true
}

# waits until no other java process runs, at most quiet_wait_s seconds; says what it waited for
await_quiet() {
  local waited=0
  while [ -n "$(others)" ] && [ "$waited" -lt "$quiet_wait_s" ]; do
    if [ "$waited" -eq 0 ]; then echo "   waiting for other java processes to end: $(others)"; fi
    sleep 5 # polling the process table: there is nothing to wait on
    waited=$((waited + 5))
  done
  if [ -n "$(others)" ]; then echo "   still running after ${quiet_wait_s} s, measuring anyway: $(others)"; fi
}

# busy jiffies and all jiffies of the whole machine, from /proc/stat
machine_jiffies() {
  awk '/^cpu / {busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6}' /proc/stat
}

# start_server NAME TRANSPORT: a fresh server on that transport; waits until it listens
start_server() {
  bench_open_config "$port" "  transport: $2"$'\n' > "$out/$1.yaml"
  bench_start_server "$server_jar" "$out/$1.yaml" "$out/$1-server.log"
}

stop_server() {
  bench_stop_server
}

failed=0
# bench NAME GENERATOR_TRANSPORT ARGS...: a generator run into OUT/NAME, run again (up to ATTEMPTS
# times) while another java process shared it; the shared attempts are kept as NAME-sharedN
bench() {
  local name=$1
  local attempt
  for attempt in $(seq 1 "$attempts"); do
    bench_once "$@"
    if [ -z "$(tr -d ' \n' < "$out/$name.others")" ]; then return 0; fi
    if [ "$attempt" -lt "$attempts" ]; then
      echo "   shared with other java processes: run again"
      for f in "$out/$name" "$out/$name.txt" "$out/$name.others"; do mv "$f" "${f/$name/$name-shared$attempt}"; done
    fi
  done
}

bench_once() {
  local name=$1 gen_transport=$2
  shift 2
  await_quiet
  local before after gen_pid sampler
  before=$(machine_jiffies)
  echo "== $name: --transport $gen_transport $*"
  java -jar "$bench_jar" --servers "ws://127.0.0.1:$port/ws" --publishers 1 --topics 1000 --payload-bytes 200 \
    --server-pids "$server_pid" --transport "$gen_transport" --out "$out/$name" "${run_time[@]}" "$@" \
    > "$out/$name.txt" 2>&1 &
  gen_pid=$!
  # every 2 s, the java processes that are neither the server nor the generator: the run was shared if any
  ( while kill -0 "$gen_pid" 2>/dev/null; do
      pgrep -x java | grep -vx -e "$server_pid" -e "$gen_pid" | tr '\n' ' ' || true
      echo; sleep 2
    done ) > "$out/$name.others" &
  sampler=$!
  wait "$gen_pid" || failed=1
  wait "$sampler" || true
  after=$(machine_jiffies)
  echo "other_java_processes_during_run: $(tr -s ' \n' ' ' < "$out/$name.others" | xargs -n1 2>/dev/null | sort -u | tr '\n' ' ')" \
    >> "$out/$name.txt"
  grep -E 'latency ms|correctness|servers|generator' "$out/$name.txt" || true
  echo "machine_jiffies_busy_total_before_after: $before $after" >> "$out/$name.txt"
  echo "server_transport_health: $(curl -s "http://127.0.0.1:$port/health" | grep -o '"transport":"[a-z_]*"')" \
    >> "$out/$name.txt"
}

machine_info "transports $side $($quick && echo quick || echo full)" > "$out/machine.txt"
uname -r >> "$out/machine.txt"

for round in $(seq 1 "$rounds"); do
  for t in $transports; do
    name="r$round-$side-$t"
    if [ "$side" = server ]; then
      start_server "$name" "$t"
      gen=$client_transport
    else
      start_server "$name" "$server_transport"
      gen=$t
    fi
    for point in $points; do
      bench "$name-${point%%:*}s-${point##*:}ps" "$gen" --subscribers "${point%%:*}" --rate "${point##*:}"
    done
    stop_server
  done
done

python3 scripts/lib/bench_transports_summary.py "$out" > "$out/summary.md"
cat "$out/summary.md"
exit "$failed"
