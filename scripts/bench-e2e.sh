#!/usr/bin/env bash
# The end-to-end benchmark set: the load generator (benchmark/target/ringcast-bench.jar) against the
# real server jar in its own process, once per server flush policy. For each policy it starts a fresh
# server, runs fixed-rate runs and a sweep at 100 subscribers (the max clean rate), stops the server,
# and at the end writes load-results/e2e/summary.md (LoadReport). Builds the jars when missing or
# older than the sources. Every run checks loss, duplicates and order; the script fails (exit 1) when
# any run was not clean, never because of a speed. See docs/benchmarks-load.md.
#
# Usage: scripts/bench-e2e.sh [--toggles | --fanout | --vs-redis | --views] [--quick]
#   (none)     the flush-policy set, about 15 minutes on 2 cores: 1,000 topics of 200 B, selector '#';
#              end-of-batch: 10 subscribers at 10,000/s, 100 at 1,000/s, 1,000 at 10/s and at 1/s;
#              every policy: 100 subscribers at 1,000/s and the sweep at 100 subscribers
#   --toggles  the features set, about 10 minutes: 100 subscribers, JSON-like 200 B values (only
#              the 28-byte header changes between two values of a topic) against a server with
#              every toggle off, each one on alone, and all on; a run at 500/s and a sweep each;
#              subscribers on the Java client (deltas and compression need it), the other sets lean
#   --fanout   the peers' workload of the fan-out issue: 1,000 topics of 200 B, ONE paced publisher,
#              every subscriber on '#', the server's defaults: 10 subscribers at 10,000/s, 100 at
#              5,000/s and 10,000/s, 1,000 at 1,000/s, then sweeps at 100 and at 1,000 subscribers;
#              then the two million-deliveries points again on a server with flushPolicy max-delay
#              (the server CPU it saves under load; FANOUT_MAX_DELAY_US_100, default 6000 µs, at 100
#              subscribers, and FANOUT_MAX_DELAY_US_1000, default 15000 µs, at 1,000, whose drains
#              already take longer than 6 ms);
#              with BASE_JAR, every point runs against that server jar too (a build of an earlier
#              commit), alternating with this one, so before and after come from one run (about 25
#              minutes with BASE_JAR on 2 cores, half without)
#   --vs-redis the --fanout workload against Redis pub/sub (issue 26): a redis-server (Debian's, installed
#              with apt-get when missing) of its defaults on REDIS_PORT, persistence off (no RDB, no AOF),
#              maxclients 10,100, fresh for each run, as the Ringcast server is; the generator's
#              --target redis (PUBLISH pipelined, each subscriber on PSUBSCRIBE bench.*, the same values,
#              checks and figures). At each point Ringcast (its defaults, lean subscribers) and Redis run
#              one after the other, Redis first at every other point: 10 subscribers at 10,000/s, 100 at
#              5,000/s and 10,000/s, 1,000 at 1,000/s, 10,000 at 10/s, then the sweeps at 100 and at
#              1,000 subscribers, and (Ringcast's alone, -prefilled) 10,000 at 10/s once more on topics
#              that carry values (a short unmeasured run publishes to each first: a reconnect storm, where
#              each subscriber is sent every topic's value); with BASE_JAR, that server jar too at every point, and the --fanout
#              set's two max-delay points (Ringcast's alone: Redis has no flush policy). summary.md sets
#              them side by side: max clean rate, p50/p99, server CPU per delivery, server peak RSS, the
#              time all subscribers took to connect. Raises the open-file limit to 12,000 for the 10,000
#              subscribers (exit 2 when the hard limit is lower); about 15 minutes on 2 cores without
#              BASE_JAR (--quick: under 3 minutes). On 2 cores the generator, not Redis, limits Redis's
#              rows above about 300,000 deliveries/s (docs/benchmarks-load.md says why)
#   --views    issue 16's views against plain subscriptions: 1,000 topics of 200-byte JSON values
#              (--value-format json: the same values in both), ONE paced publisher, VIEWS_SUBSCRIBERS (default
#              1,000) lean subscribers on '#', the server's defaults (plus VIEWS_SERVER_YAML); at each rate of
#              VIEWS_RATES (default "200 1000": below saturation, where a delivery is a frame either way, and
#              the --fanout set's 1,000-subscriber point), VIEWS_ROUNDS rounds (default 3) of a plain run and a
#              run with the subscribers spread round robin over VIEW_SHAPES (default 10, at most 10) view shapes
#              (--view-shapes: each projects the header fields and one of its own and filters on what every
#              value passes, so every update reaches every subscriber), each against a fresh server, plain
#              first in odd rounds and views first in even ones; then views.md (ViewsReport): each group's
#              medians and views against plain (server CPU per delivery within 1.5x is issue 16's bar), next
#              to summary.md; about 8 minutes on 2 cores with the defaults
#   --quick    the same shape with 2 s runs and a short sweep, to check the script (about 2 minutes;
#              --views --quick: one round at 200/s with 20 subscribers, about 30 s)
# Environment: PORT (default 18080), OUT (default load-results/e2e, load-results/toggles,
#              load-results/fanout, load-results/vs-redis or load-results/views), MAX_DELAY_US (default 200),
#              FANOUT_MAX_DELAY_US_100 (default 6000), FANOUT_MAX_DELAY_US_1000 (default 15000),
#              REDIS_PORT (--vs-redis: default 16379),
#              BASE_JAR (--fanout, --vs-redis: the server jar to compare with), SERVER_JAVA_OPTS (JVM options of
#              every server started, after those scripts/ringcast gives a node), VIEWS_RATES, VIEWS_ROUNDS,
#              VIEWS_SUBSCRIBERS, VIEW_SHAPES, VIEWS_SERVER_YAML (--views, above; VIEWS_SERVER_YAML is more
#              server config, e.g. "$(printf 'pipeline:\n  flushPolicy: max-delay\n')").
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh
# shellcheck source=lib/bench_server.sh
. scripts/lib/bench_server.sh

quick=false
set_name=flush
for arg in "$@"; do
  case $arg in
    --quick) quick=true ;;
    --toggles) set_name=toggles ;;
    --fanout) set_name=fanout ;;
    --vs-redis) set_name=vs-redis ;;
    --views) set_name=views ;;
    *) echo "unknown option: $arg (see the usage at the top of $0)"; exit 2 ;;
  esac
done
port=${PORT:-18080}
case $set_name in
  toggles) out=${OUT:-load-results/toggles} ;;
  fanout) out=${OUT:-load-results/fanout} ;;
  vs-redis) out=${OUT:-load-results/vs-redis} ;;
  views) out=${OUT:-load-results/views} ;;
  *) out=${OUT:-load-results/e2e} ;;
esac
base_jar=${BASE_JAR:-}
if [ -n "$base_jar" ] && [ ! -f "$base_jar" ]; then echo "BASE_JAR: no such file: $base_jar"; exit 2; fi
max_delay_us=${MAX_DELAY_US:-200}
fanout_max_delay_us_100=${FANOUT_MAX_DELAY_US_100:-6000}
fanout_max_delay_us_1000=${FANOUT_MAX_DELAY_US_1000:-15000}
redis_port=${REDIS_PORT:-16379}
# --vs-redis: 10,000 subscribers, the publisher and a margin
redis_maxclients=10100

server_jar=server/target/ringcast-server.jar
bench_jar=benchmark/target/ringcast-bench.jar
if [ ! -f "$server_jar" ] || [ ! -f "$bench_jar" ] || [ -n "$(find pom.xml */pom.xml \
      protocol/src/main server/src/main client-java/src/main benchmark/src/main -newer "$bench_jar" -print -quit)" ]; then
  echo "building $server_jar and $bench_jar"
  mvn -B -q -ntp -pl server,benchmark -am package -DskipTests
fi

if $quick; then
  run_time=(--duration 2s --warmup 1s)
  sweep=(--sweep --sweep-start 500 --sweep-step 500 --sweep-max 1000 --duration 2s --warmup 1s)
else
  run_time=(--duration 20s --warmup 5s)
  sweep=(--sweep --sweep-start 1000 --sweep-step 250 --sweep-max 6000 --duration 10s --warmup 3s)
fi
if [ "$set_name" = toggles ] && ! $quick; then
  sweep=(--sweep --sweep-start 250 --sweep-step 250 --sweep-max 8000 --duration 8s --warmup 3s)
fi
if [ "$set_name" = views ] && ! $quick; then
  run_time=(--duration 15s --warmup 10s) # as the --fanout set's fixed runs
fi
if { [ "$set_name" = fanout ] || [ "$set_name" = vs-redis ]; } && ! $quick; then
  run_time=(--duration 15s --warmup 10s) # the issue's harness warmed the JIT up for 10 s
  sweep=(--sweep --sweep-start 2500 --sweep-step 2500 --sweep-max 50000 --duration 8s --warmup 4s)
  sweep_1000=(--sweep --sweep-start 250 --sweep-step 250 --sweep-max 5000 --duration 8s --warmup 4s)
else
  sweep_1000=("${sweep[@]}")
fi

if [ "$set_name" = vs-redis ]; then
  if ! command -v redis-server > /dev/null; then
    echo "installing Debian's redis-server"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server > /dev/null
    # the package enables a service of its own on 6379 where systemd runs: not ours to stop, and not REDIS_PORT
    command -v redis-server > /dev/null || { echo "redis-server did not install"; exit 3; }
  fi
  # 10,000 subscribers: a socket each in the generator and in the server (Redis asks for maxclients + 32);
  # the processes started from here inherit the limit
  open_files=12000
  if [ "$(ulimit -Sn)" != unlimited ] && [ "$(ulimit -Sn)" -lt "$open_files" ]; then
    ulimit -Sn "$open_files" 2> /dev/null || ulimit -n "$open_files" 2> /dev/null || {
      echo "--vs-redis needs $open_files open files per process for its 10,000 subscribers; the limit is" \
        "$(ulimit -Sn) and the hard limit $(ulimit -Hn): raise it (as root: ulimit -Hn, or limits.conf)"
      exit 2
    }
  fi
fi

rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# start_server NAME YAML [JAR]: a fresh server with that config, of this build's jar or JAR
start_server() {
  bench_open_config "$port" "" "$2" > "$work/$1.yaml"
  # emptied first: its start line from the point before would be taken for this server's
  : > "$out/$1/server.log"
  bench_start_server "${3:-$server_jar}" "$work/$1.yaml" "$out/$1/server.log"
}

stop_server() {
  bench_stop_server
}

# start_redis NAME: a fresh redis-server of its defaults on REDIS_PORT, persistence off, room for 10,000
# subscribers, its working directory under $work and its log in $out/NAME/server.log; sets server_pid as
# start_server does (stop_server stops it) and returns once it accepts connections (exit 3 if it does not)
start_redis() {
  local log=$out/$1/server.log
  mkdir -p "$work/redis-$1"
  : > "$log" # emptied first, as in start_server
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --maxclients "$redis_maxclients" \
    --dir "$work/redis-$1" > "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    if grep -q 'Ready to accept connections' "$log"; then return 0; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then cat "$log"; echo "redis-server did not start"; exit 3; fi
    sleep 0.1 # polling its log for its start line, as bench_start_server does: there is nothing to wait on
  done
  echo "redis-server did not listen within 30 s"; exit 3
}

failed=0
ringcast_servers="ws://127.0.0.1:$port/ws"
# the --servers of the next generator invocation (point sets Redis's for a redis run)
bench_servers=$ringcast_servers
# bench POLICY ARGS...: one generator invocation into the policy's directory; remembers a failure
bench() {
  local policy=$1
  shift
  echo "== $policy: $*"
  java -jar "$bench_jar" --servers "$bench_servers" --topics 1000 --payload-bytes 200 \
    --out "$out/$policy" "$@" 2>&1 | tee -a "$out/$policy/generator.log" || failed=1
}

machine_info "$($quick && echo quick || echo full)" > "$out/machine.txt"
if [ "$set_name" = vs-redis ]; then
  redis-server --version >> "$out/machine.txt"
fi

if [ "$set_name" = fanout ] || [ "$set_name" = vs-redis ]; then
  variants=(current)
  [ -n "$base_jar" ] && variants=(base current)
  [ "$set_name" = vs-redis ] && variants+=(redis)
  # point ARGS...: one generator run per variant, each against a fresh server of its jar (or a fresh
  # redis-server), with the Ringcast server's config in $point_yaml and its results under $point_suffix;
  # with --vs-redis, Redis first at every other point, so that neither always follows the other's load
  point_yaml=""
  point_suffix=""
  # whether the point's subscribers join topics that carry values: a short run gives each of the
  # 1,000 topics one first (Ringcast's alone, with a point suffix: Redis keeps no values)
  point_prefill=false
  points=0
  # prefill SERVERS: every topic of the workload published to, through 10 subscribers, unmeasured
  prefill() {
    java -jar "$bench_jar" --servers "$1" --topics 1000 --payload-bytes 200 --publishers 1 \
      --subscribers 10 --rate 2000 --duration 2s --warmup 1s --out "$work/prefill" > "$work/prefill.log" 2>&1 \
      || { cat "$work/prefill.log"; echo "prefilling the topics failed"; failed=1; }
  }
  point() {
    local order=("${variants[@]}")
    if [ "$set_name" = vs-redis ] && [ $((points % 2)) -eq 1 ]; then
      order=(redis "${variants[@]:0:${#variants[@]}-1}")
    fi
    points=$((points + 1))
    for variant in "${order[@]}"; do
      if [ "$variant" = redis ]; then
        [ -n "$point_suffix" ] && continue # a Ringcast server's flush policy: Redis has none
        mkdir -p "$out/redis"
        start_redis redis
        bench_servers="redis://127.0.0.1:$redis_port"
        bench redis --target redis --publishers 1 --server-pids "$server_pid" "$@"
        bench_servers=$ringcast_servers
        stop_server
        continue
      fi
      local name=$variant$point_suffix
      mkdir -p "$out/$name"
      local jar=$server_jar
      [ "$variant" = base ] && jar=$base_jar
      start_server "$name" "$point_yaml" "$jar"
      if $point_prefill; then prefill "$ringcast_servers"; fi
      bench "$name" --publishers 1 --server-pids "$server_pid" "$@"
      stop_server
    done
  }
  point --subscribers 10 --rate 10000 "${run_time[@]}"
  point --subscribers 100 --rate 5000 "${run_time[@]}"
  point --subscribers 100 --rate 10000 "${run_time[@]}"
  point --subscribers 1000 --rate 1000 "${run_time[@]}"
  if [ "$set_name" = vs-redis ]; then
    point --subscribers 10000 --rate 10 "${run_time[@]}"
    # a reconnect storm: 10,000 subscribers of # joining 1,000 topics that carry values, each sent
    # every topic's TOPIC and SNAPSHOT (about 230 kB a subscriber)
    point_prefill=true
    point_suffix=-prefilled
    point --subscribers 10000 --rate 10 "${run_time[@]}"
    point_prefill=false
    point_suffix=""
  fi
  point --subscribers 100 "${sweep[@]}"
  point --subscribers 1000 "${sweep_1000[@]}"
  point_suffix=-max-delay
  point_yaml=$(printf 'pipeline:\n  flushPolicy: max-delay\n  flushMaxDelayUs: %s\n' "$fanout_max_delay_us_100")
  point --subscribers 100 --rate 10000 "${run_time[@]}"
  point_yaml=$(printf 'pipeline:\n  flushPolicy: max-delay\n  flushMaxDelayUs: %s\n' "$fanout_max_delay_us_1000")
  point --subscribers 1000 --rate 1000 "${run_time[@]}"
elif [ "$set_name" = views ]; then
  if $quick; then
    views_rounds=${VIEWS_ROUNDS:-1} views_rates=${VIEWS_RATES:-200} views_subscribers=${VIEWS_SUBSCRIBERS:-20}
  else
    views_rounds=${VIEWS_ROUNDS:-3} views_rates=${VIEWS_RATES:-"200 1000"} views_subscribers=${VIEWS_SUBSCRIBERS:-1000}
  fi
  view_shapes=${VIEW_SHAPES:-10}
  for round in $(seq 1 "$views_rounds"); do
    # alternating which goes first, so that a drift of the machine over a round favours neither
    order=(plain views)
    [ $((round % 2)) -eq 0 ] && order=(views plain)
    for rate in $views_rates; do
      for variant in "${order[@]}"; do
        name=r$round-$variant-${rate}ps
        mkdir -p "$out/$name"
        start_server "$name" "${VIEWS_SERVER_YAML:-}"
        # the same JSON values in both: only the subscriptions differ
        shapes=()
        [ "$variant" = views ] && shapes=(--view-shapes "$view_shapes")
        bench "$name" --publishers 1 --server-pids "$server_pid" --subscribers "$views_subscribers" --rate "$rate" \
          --value-format json ${shapes[@]+"${shapes[@]}"} "${run_time[@]}"
        stop_server
      done
    done
  done
elif [ "$set_name" = flush ]; then
  for policy in end-of-batch immediate max-delay; do
    mkdir -p "$out/$policy"
    start_server "$policy" "$(printf 'pipeline:\n  flushPolicy: %s\n  flushMaxDelayUs: %s\n' "$policy" "$max_delay_us")"
    if [ "$policy" = end-of-batch ]; then
      bench "$policy" --subscribers 10 --rate 10000 "${run_time[@]}"
      bench "$policy" --subscribers 1000 --rate 10 "${run_time[@]}"
      bench "$policy" --subscribers 1000 --rate 1 "${run_time[@]}"
    fi
    bench "$policy" --subscribers 100 --rate 1000 "${run_time[@]}"
    bench "$policy" --subscribers 100 "${sweep[@]}"
    stop_server
  done
else
  # compressionMinBytes 0: every update is a candidate, so the table shows what deflate makes of 200 B
  toggles=(
    "1-all-off|lastValueCache: false|deltas: false|compression: false|conflation: \"off\""
    "2-cache|lastValueCache: true|deltas: false|compression: false|conflation: \"off\""
    "3-deltas|lastValueCache: true|deltas: true|compression: false|conflation: \"off\""
    "4-compression|lastValueCache: true|deltas: false|compression: true|conflation: \"off\""
    "5-conflation|lastValueCache: true|deltas: false|compression: false|conflation: on-backpressure"
    "6-all-on|lastValueCache: true|deltas: true|compression: true|conflation: on-backpressure"
  )
  for entry in "${toggles[@]}"; do
    IFS='|' read -r name cache deltas compression conflation <<< "$entry"
    mkdir -p "$out/$name"
    start_server "$name" "$(printf 'features:\n  %s\n  %s\n  %s\n  %s\n  compressionMinBytes: 0\n' \
      "$cache" "$deltas" "$compression" "$conflation")"
    # the Java client's subscribers: lean ones apply no deltas and offer no compression
    bench "$name" --subscriber-client java --subscribers 100 --rate 500 --padding text "${run_time[@]}"
    bench "$name" --subscriber-client java --subscribers 100 --padding text "${sweep[@]}"
    stop_server
  done
fi

java -cp "$bench_jar" io.ringcast.benchmark.load.LoadReport "$out"
if [ "$set_name" = views ]; then
  java -cp "$bench_jar" io.ringcast.benchmark.load.ViewsReport "$out"
fi
echo "results: $out"
exit $failed
