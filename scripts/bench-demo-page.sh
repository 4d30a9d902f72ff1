#!/usr/bin/env bash
# The demo page at / in a real headless Chromium: what a browser gets from the demo publisher
# (docs/benchmarks.md, "Demo page in headless Chromium"). For each run it starts a server jar on a
# free port with config/server.yaml's demo settings (instruments, updates/s; everything else the
# defaults, bound to 127.0.0.1), opens http://127.0.0.1:PORT/ in Debian's Chromium (/usr/bin/chromium,
# --headless, driven by /usr/bin/chromedriver over its HTTP WebDriver protocol from Node, no package),
# lets the page run WARMUP seconds from its first update, then once a second for DURATION seconds
# evaluates JavaScript in the page through the Chrome DevTools Protocol: the page's counters and its latency samples
# (window.ringcastDemoStats in demo.js), and reads the CPU ticks of the Chromium processes and the
# server from /proc/PID/stat. Per run: updates/s the page received, p50/p99 (and p99.9, max) of the
# end-to-end latency of every update the page recorded over the measured time, the page's own
# figures (medians of its per-second readings), gaps, reconnects, browser and server CPU seconds.
# A page without window.ringcastDemoStats (a jar built before it) gives only its own figures: its
# p50/p99 are then the medians of its 5-s windows, marked "(page)" in the table.
# Stops everything it started on exit, also on failure or Ctrl-C.
#
# Usage: scripts/bench-demo-page.sh [JAR]
#   JAR        the server jar to measure (default server/target/ringcast-server.jar, built with
#              mvn -B -q -pl server -am package -DskipTests when missing)
# Environment: BASE_JAR (a second server jar, e.g. an earlier commit's build: the runs alternate
#              base, current, base, current ...), ROUNDS (default 2: runs per jar), WARMUP (seconds,
#              default 10), DURATION (measured seconds, default 20), OUT (default
#              load-results/demo-page), SERVER_JAVA_OPTS (JVM options of every server started, after
#              those scripts/ringcast gives a node), CHROMIUM_BIN, CHROMEDRIVER_BIN (default
#              /usr/bin/chromium, /usr/bin/chromedriver).
# Output: OUT/runs.jsonl (a JSON line per run), OUT/summary.md (printed at the end), OUT/machine.txt,
#         and per run OUT/run-R-VARIANT/: server.log, chromedriver.log, chromium-cmdline.txt, samples.jsonl
#         (each second's reading). JAR, BASE_JAR and OUT are relative to the current directory.
# Each run takes about WARMUP + DURATION + 5 seconds: 2.5 minutes with BASE_JAR and the defaults, half without.
set -euo pipefail
caller_dir=$PWD
cd "$(dirname "$0")/.."
# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh
# shellcheck source=lib/bench_server.sh
. scripts/lib/bench_server.sh

# relative PATH: from the directory the script was started in
from_caller() {
  case $1 in
    /*) echo "$1" ;;
    *) echo "$caller_dir/$1" ;;
  esac
}

case $# in
  0) server_jar=server/target/ringcast-server.jar; default_jar=true ;;
  1) server_jar=$(from_caller "$1"); default_jar=false ;;
  *) echo "usage: $0 [JAR] (see the top of $0)"; exit 2 ;;
esac
base_jar=${BASE_JAR:+$(from_caller "$BASE_JAR")}
rounds=${ROUNDS:-2}
warmup_s=${WARMUP:-10}
duration_s=${DURATION:-20}
out=${OUT:+$(from_caller "$OUT")}
out=${out:-load-results/demo-page}
chromium=${CHROMIUM_BIN:-/usr/bin/chromium}
chromedriver=${CHROMEDRIVER_BIN:-/usr/bin/chromedriver}
for n in "$rounds" "$duration_s"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS and DURATION must be whole numbers from 1: $n"; exit 2; }
done
[[ $warmup_s =~ ^[0-9]+$ ]] || { echo "WARMUP must be a whole number of seconds: $warmup_s"; exit 2; }
for tool in "$chromium" "$chromedriver" node; do
  command -v "$tool" > /dev/null || {
    echo "$tool is missing: the benchmark needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver) and Node"
    exit 2
  }
done
if [ -n "$base_jar" ] && [ ! -f "$base_jar" ]; then echo "BASE_JAR: no such file: $base_jar"; exit 2; fi
if [ ! -f "$server_jar" ]; then
  if ! $default_jar; then echo "no such file: $server_jar"; exit 2; fi
  echo "building $server_jar"
  mvn -B -q -pl server -am package -DskipTests
elif $default_jar && [ -n "$(find pom.xml {protocol,cluster,client-java,server}/pom.xml \
      {protocol,cluster,client-java,server}/src/main client-js/src -newer "$server_jar" -print -quit)" ]; then
  echo "note: sources are newer than $server_jar; it is measured as it is (rebuild: mvn -B -q -pl server -am package -DskipTests)"
fi

# instruments and updatesPerSecond of the demo: block of config/server.yaml
demo_setting() {
  awk -v key="$1" '/^[^ #]/ { in_demo = ($0 ~ /^demo:/) } in_demo && $1 == key ":" { print $2; exit }' config/server.yaml
}
instruments=$(demo_setting instruments)
demo_rate=$(demo_setting updatesPerSecond)
[[ $instruments =~ ^[0-9]+$ && $demo_rate =~ ^[0-9]+$ ]] || {
  echo "cannot read demo.instruments and demo.updatesPerSecond from config/server.yaml"; exit 2; }

# a port nothing listens on now (the kernel's choice)
free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

work=$(mktemp -d)
server_pid=
driver_pid=
node_pid=

# descendants PID: the processes under PID, parents before their children
descendants() {
  local child
  for child in $(pgrep -P "$1" || true); do
    echo "$child"
    descendants "$child"
  done
}

# stop_pids PID...: SIGTERM, up to 5 s to exit, then SIGKILL
stop_pids() {
  local pid left
  [ $# -gt 0 ] || return 0
  for pid in "$@"; do kill "$pid" 2> /dev/null || true; done
  for _ in $(seq 1 50); do
    left=false
    for pid in "$@"; do if kill -0 "$pid" 2> /dev/null; then left=true; fi; done
    $left || return 0
    sleep 0.1 # polling: the browser's processes are not children of this shell, nothing to wait on
  done
  for pid in "$@"; do kill -9 "$pid" 2> /dev/null || true; done
}

# chromedriver and every browser process under it (the run closes its session, which ends the
# browser; this is for a run that failed or was interrupted)
stop_browser() {
  if [ -n "$driver_pid" ]; then
    # shellcheck disable=SC2046 # one PID a word
    stop_pids "$driver_pid" $(descendants "$driver_pid")
    wait "$driver_pid" 2> /dev/null || true
    driver_pid=
  fi
}

stop_server() {
  if [ -n "$server_pid" ]; then
    stop_pids "$server_pid"
    wait "$server_pid" 2> /dev/null || true
    server_pid=
  fi
}

cleanup() {
  if [ -n "$node_pid" ]; then stop_pids "$node_pid"; wait "$node_pid" 2> /dev/null || true; fi
  stop_browser
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_server JAR DIR: a fresh server of JAR on a free port, started as bench_start_server starts
# one (scripts/ringcast), its log in DIR; sets server_pid, port
start_server() {
  port=$(free_port)
  printf 'server:\n  host: "127.0.0.1"\n  port: %s\ndemo:\n  enabled: true\n  instruments: %s\n  updatesPerSecond: %s\n' \
    "$port" "$instruments" "$demo_rate" > "$work/server.yaml"
  bench_start_server "$1" "$work/server.yaml" "$2/server.log"
}

# start_driver DIR: chromedriver on a port of its choice; sets driver_pid, driver_port
start_driver() {
  "$chromedriver" --port=0 > "$1/chromedriver.log" 2>&1 &
  driver_pid=$!
  for _ in $(seq 1 300); do
    driver_port=$(sed -n 's/.*started successfully on port \([0-9]*\).*/\1/p' "$1/chromedriver.log")
    if [ -n "$driver_port" ]; then return 0; fi
    if ! kill -0 "$driver_pid" 2> /dev/null; then cat "$1/chromedriver.log"; echo "chromedriver did not start"; exit 3; fi
    sleep 0.1 # polling chromedriver's log for its port
  done
  echo "chromedriver did not start within 30 s"; exit 3
}

# measure ROUND VARIANT JAR: one run, one line in runs.jsonl
measure() {
  local round=$1 variant=$2 jar=$3
  local dir="$out/run-$round-$variant"
  mkdir -p "$dir" "$work/profile-$round-$variant"
  start_server "$jar" "$dir"
  start_driver "$dir"
  CHROMIUM_BIN=$chromium CLK_TCK=$(getconf CLK_TCK) node scripts/lib/bench_demo_page.mjs run \
    --driver "http://127.0.0.1:$driver_port" --driver-pid "$driver_pid" --server-pid "$server_pid" \
    --page "http://127.0.0.1:$port/" --warmup-s "$warmup_s" --duration-s "$duration_s" \
    --profile "$work/profile-$round-$variant" --samples "$dir/samples.jsonl" --runs "$out/runs.jsonl" \
    --meta-number "round=$round" --meta "variant=$variant" --meta "jar=$jar" \
    --meta "jarSha256=$(sha256sum "$jar" | cut -c1-12)" \
    --meta-number "instruments=$instruments" --meta-number "demoUpdatesPerSecond=$demo_rate" &
  node_pid=$!
  wait "$node_pid" # in the background so that a signal reaches the trap at once
  node_pid=
  stop_browser
  stop_server
}

mkdir -p "$out"
rm -rf "$out"/run-* "$out/runs.jsonl" "$out/summary.md" "$out/machine.txt"
machine_info "demo page, warm-up $warmup_s s, measured $duration_s s, $rounds round(s)" > "$out/machine.txt"
echo "chromium: $("$chromium" --version 2> /dev/null | tail -1)" >> "$out/machine.txt"
echo "node: $(node --version)" >> "$out/machine.txt"

variants=(current)
[ -n "$base_jar" ] && variants=(base current)
for round in $(seq 1 "$rounds"); do
  for variant in "${variants[@]}"; do
    jar=$server_jar
    [ "$variant" = base ] && jar=$base_jar
    echo "== round $round/$rounds, $variant: $jar (warm-up $warmup_s s, measured $duration_s s)"
    measure "$round" "$variant" "$jar"
  done
done

echo
node scripts/lib/bench_demo_page.mjs summary "$out"
echo "results: $out"
