#!/usr/bin/env bash
# Runs the JMH fan-out suite: our fan-out core (FanOutBenchmark) against the queue-per-subscriber
# baseline (QueueFanOutBenchmark), both sweeps, with -prof gc. Builds the benchmark jar first when
# it is missing or older than the sources. Writes, under benchmark/results/jmh/, one JMH JSON file
# per run (-rf json -rff) with its console log, machine.txt, and summary.json / summary.md: ns and
# bytes per delivered update, ours against the baseline (DeliveryReport). See docs/benchmarks-jmh.md.
#
# Usage: scripts/bench-jmh.sh [--quick | --alloc-profile] [extra JMH options, appended to every run]
#   (none)           the full suite: about 1 to 1.5 hours on 2 cores, most of it the 10^7-update point
#   --quick          every benchmark at small sizes, under a minute, into benchmark/results/jmh-quick/
#   --features       only the cost of each toggle (ours at 100 subscribers, about 3 minutes),
#                    into benchmark/results/jmh-features/
#   --alloc-profile  where our path allocates: one point with TLABs off under JFR, every allocation
#                    summed by call site, into benchmark/results/jmh-alloc/ (about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh

mode=full
case "${1:-}" in
  --quick) mode=quick; shift ;;
  --alloc-profile) mode=alloc; shift ;;
  --features) mode=features; shift ;;
esac
extra=("$@")

jar=benchmark/target/ringcast-bench.jar
if [ ! -f "$jar" ] || [ -n "$(find pom.xml benchmark/pom.xml benchmark/src/main server/src/main protocol/src/main \
      -newer "$jar" -print -quit)" ]; then
  echo "building $jar"
  mvn -B -q -ntp -pl benchmark -am package -DskipTests
fi

case $mode in
  full) out=benchmark/results/jmh ;;
  quick) out=benchmark/results/jmh-quick ;;
  alloc) out=benchmark/results/jmh-alloc ;;
  features) out=benchmark/results/jmh-features ;;
esac
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.log "$out"/*.md "$out"/*.txt
machine_info "$mode" > "$out/machine.txt"

both='io\.ringcast\.benchmark\.jmh\.(FanOutBenchmark|QueueFanOutBenchmark)\.fanOut'
ours='io\.ringcast\.benchmark\.jmh\.FanOutBenchmark\.fanOut'

# run NAME JMH-ARGS...: one JMH invocation (one fork per benchmark and parameter point)
run() {
  local name=$1
  shift
  echo "== $name: $*"
  java -cp "$jar" org.openjdk.jmh.Main "$@" -prof gc -to 180m -rf json -rff "$out/$name.json" \
    ${extra[@]+"${extra[@]}"} 2>&1 | tee "$out/$name.log"
}

case $mode in
  quick)
    # checks the suite works and gives a first idea; small operations, not steady state
    run quick "$both" -p subscribers=10,100,1000 -p updates=10000 -wi 3 -i 3
    ;;
  features)
    run features "$ours" -p subscribers=100 -p updates=100000 -p features=off,cache,deltas,compression,all-on -wi 3 -i 10
    ;;
  full)
    # Subscriber sweep at 10^5 updates; 1,000 subscribers x 10^5 updates is also the first point of
    # the update sweep. One operation is updates x subscribers deliveries, so the larger the point,
    # the fewer iterations; every point keeps one warm-up iteration at least, because JMH runs the
    # trial setup inside the first iteration and -prof gc would count its allocations.
    run subscribers-10-100 "$both" -p subscribers=10,100 -p updates=100000 -wi 5 -i 20
    run subscribers-1000   "$both" -p subscribers=1000   -p updates=100000 -wi 3 -i 10
    run subscribers-10000  "$both" -p subscribers=10000  -p updates=100000 -wi 1 -i 3
    # update sweep at 1,000 subscribers
    run updates-1000000    "$both" -p subscribers=1000   -p updates=1000000 -wi 1 -i 3
    # one operation here is 10^10 deliveries (minutes): JIT warm-up and the trial setup's allocations
    # are lost in it, so no warm-up iteration
    run updates-10000000   "$both" -p subscribers=1000   -p updates=10000000 -wi 0 -i 1
    # what each toggle costs on the fan-out path (ours only; 'cache' is the default, measured above)
    run features "$ours" -p subscribers=100 -p updates=100000 -p features=off,deltas,compression,all-on -wi 3 -i 10
    # ours with Netty's default leak detection (simple), which the server runs with unless told otherwise
    run leak-detection-simple "$ours" -p subscribers=1000 -p updates=100000 -wi 1 -i 3 \
      -jvmArgsAppend "-Xms6g -Xmx6g -Dio.netty.leakDetection.level=simple"
    ;;
  alloc)
    # every allocation becomes a JFR event with its stack when TLABs are off: exact attribution, slow run
    jfr_dir=$(mktemp -d)
    trap 'rm -rf "$jfr_dir"' EXIT
    cat > "$jfr_dir/allocations.jfc" <<'JFC'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="allocations">
  <event name="jdk.ObjectAllocationOutsideTLAB">
    <setting name="enabled">true</setting>
    <setting name="stackTrace">true</setting>
  </event>
</configuration>
JFC
    run alloc-profile "$ours" -p subscribers=100 -p updates=100000 -wi 5 -i 5 \
      -jvmArgsAppend "-Xms6g -Xmx6g -Dio.netty.leakDetection.level=disabled -XX:-UseTLAB" \
      -prof "jfr:dir=$jfr_dir;configName=$jfr_dir/allocations.jfc;stackDepth=64"
    java -cp "$jar" io.ringcast.benchmark.jmh.AllocationSites "$(find "$jfr_dir" -name '*.jfr' | head -1)" 14 25 \
      | tee "$out/allocation-sites.txt"
    echo "results: $out"
    exit 0
    ;;
esac

java -cp "$jar" io.ringcast.benchmark.jmh.DeliveryReport "$out" "$out"/*.json
echo "results: $out"
