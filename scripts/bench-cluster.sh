#!/usr/bin/env bash
# The local five-node Raft cluster against one node on the same workload, in one run on this
# machine (docs/benchmarks.md, "Cluster on the Raft engine"); or against a five-node NATS JetStream
# (--vs-jetstream, docs/benchmarks-load.md). Results and a summary table:
# benchmark/target/bench-cluster-<UTC time>/ (summary.md).
#
# Usage: scripts/bench-cluster.sh [--diffusion | --vs-jetstream [--rates R,...] [--kill-rate R] [--only SYSTEM]]
#                                 [--no-single] [--no-kill] [--kill-after S]
#                                 [load generator options, e.g. --rate 2000 --duration 30s]
#   (default)    0. five nodes (scripts/cluster.sh, each with a fresh cluster.dataDir), the workload
#                   for 25 s unmeasured: the five JVMs' JIT compilers take a core for a minute;
#                1. the workload, with the servers' CPU measured;
#                2. the same workload again on the same cluster with the Raft leader (named by
#                   /health) killed with SIGKILL --kill-after S (default 5) seconds into the measured
#                   window: the pause is the time from the kill to the slowest publisher's first ack
#                   (and when deliveries stopped and resumed: intervals of 100 ms in kill/*-intervals.csv);
#                3. one node, same heap, history and features: the same unmeasured run, then the workload.
#                Workload: 100 subscribers on '#', 100 topics of 200 B, 5,000 publishes/s from 4
#                publishers (500,000 deliveries/s), 5 s warm-up, 15 s measured; clients spread round
#                robin over the nodes, each with every node as a fallback; subscribers on the Java
#                client, which resumes on another node when the leader dies (--subscriber-client java).
#   --diffusion  the seed's Diffusion test scaled to this machine: five nodes, 100,000 topics of
#                200 B, one publisher, 1,000 subscribers on '#' spread over the nodes, last-value
#                cache, deltas, compression and conflation all off; a sweep (from 25/s by 25/s up to
#                2,000/s: --sweep-start, --sweep-step, --sweep-max) for the highest clean rate (p99 <
#                10 ms, nothing lost, publishers at pace), then one with p99 < 100 ms for what the
#                machine reaches when that finds none; deliveries per server CPU second; then
#                the same two sweeps against one node. Before them, every topic is created (a topic
#                exists once published: one publish each, 5,000/s, no subscriber), as in the seed's
#                test, where all 100,000 exist; each step's 1,000 subscriptions to '#' are then
#                answered with every topic's name (TOPIC, about 20 B each: 2 MB per subscriber).
#                The unmeasured first run: 45 s at 4x the first step's rate.
#   --vs-jetstream  the five Ringcast nodes against five NATS JetStream servers (Debian's nats-server
#                2.9, installed when missing: scripts/lib/jetstream.sh) on loopback beside them, both
#                running all along, each measured with the same workload through the load generator
#                (Ringcast: --target ringcast, the Java client's subscribers; JetStream: --target
#                jetstream, the official NATS client's publishers and ordered-consumer subscribers):
#                100 topics (subjects bench.t0000..) of 200 B, 5 publishers with acks and retries, 100
#                subscribers on every topic spread over the nodes; JetStream's one stream in files, 5
#                replicas, a publish acked once a majority stored it; the Ringcast nodes with
#                cluster.commitFsync: false, since JetStream 2.9 cannot fsync each write either.
#                0. an unmeasured run of each (Ringcast's JIT compilers; JetStream's stream made);
#                1. at each rate of --rates (default 200,1000,2000,5000 publishes/s), a run of each, the
#                   two in turn (JetStream first at the first rate, Ringcast first at the next...): 10 s
#                   unmeasured, then --duration (default 60s) measured, the servers' CPU and memory too;
#                2. at --kill-rate (default 1000/s), a run of each with its leader killed with SIGKILL
#                   --kill-after s into the measured window (Ringcast's Raft leader named by /health,
#                   JetStream's stream leader named by /jsz); last, since each leaves its cluster at four.
#                Summary: both side by side per rate (ack and delivery p50/p99, acked/s, server CPU per
#                delivery, RSS sum, the longest pause between acks), and the two kills' pauses.
#                --only jetstream|ringcast: that system's half alone (the other's cluster not started).
#   --no-single, --no-kill   leave out the one-node runs, or the kill.
#   --jit-warmup D  the unmeasured first run lasts D (e.g. 150s) instead of the mode's 20-40 s: on
#                a 2-core machine five nodes' C2 compilers are still busy minutes into a load.
# Load generator options given here replace the workload's (e.g. --rate, --subscribers, --duration).
# Environment: HEAP (each node's -Xmx, default 512m; 2g with --diffusion), SKIP_BUILD=1.
# Needs the ports of config/cluster (8081-8085, 7801-7805 and their failure-detection ports) free,
# and with --vs-jetstream 4221-4225, 6221-6225 and 8221-8225.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh
# shellcheck source=lib/jetstream.sh
. scripts/lib/jetstream.sh

mode=compare
single=true
kill_phase=true
kill_after=5
rates=200,1000,2000,5000
kill_rate=1000
only=
jit_warmup_for= # the unmeasured first run's length; empty: the mode's own
# the Java client's subscribers: the kill needs them, since a lean subscriber that loses its node
# fails the run instead of resuming on another (--subscriber-client lean for the runs without it)
declare -A opt=([--subscribers]=100 [--topics]=100 [--payload-bytes]=200 [--rate]=5000 [--publishers]=4
                [--warmup]=5s [--duration]=15s [--subscriber-client]=java)
declare -A given=()
while [ $# -gt 0 ]; do
  case $1 in
    --diffusion) mode=diffusion; shift ;;
    --vs-jetstream) mode=jetstream; shift ;;
    --rates) rates=${2:?--rates needs rates, e.g. 200,1000}; shift 2 ;;
    --kill-rate) kill_rate=${2:?--kill-rate needs a rate}; shift 2 ;;
    --only) only=${2:?--only needs jetstream or ringcast}; shift 2 ;;
    --no-single) single=false; shift ;;
    --no-kill) kill_phase=false; shift ;;
    --kill-after) kill_after=${2:?--kill-after needs seconds}; shift 2 ;;
    --jit-warmup) jit_warmup_for=${2:?--jit-warmup needs a duration, e.g. 150s}; shift 2 ;;
    --verbose) opt[--verbose]=; shift ;;
    --*) opt[$1]=${2:?$1 needs a value}; given[$1]=1; shift 2 ;;
    *) echo "unknown argument: $1 (see the usage at the top of $0)"; exit 2 ;;
  esac
done
[[ $rates =~ ^[0-9]+(,[0-9]+)*$ && $kill_rate =~ ^[0-9]+$ ]] || { echo "--rates: rates per second, e.g. 200,1000"; exit 2; }
# the systems measured: Ringcast always, JetStream beside it with --vs-jetstream (--only: one of them)
with_ringcast=true
with_jetstream=false
[ "$mode" = jetstream ] && with_jetstream=true
case $only in
  '') ;;
  jetstream|ringcast)
    [ "$mode" = jetstream ] || { echo "--only goes with --vs-jetstream"; exit 2; }
    [ "$only" = jetstream ] && with_ringcast=false || with_jetstream=false ;;
  *) echo "--only: jetstream or ringcast, was '$only'"; exit 2 ;;
esac
features=
if [ "$mode" = diffusion ]; then
  # every toggle off: no conflation, compression, deltas or cache; every update in order, none lost
  features='features:\n  lastValueCache: false\n  deltas: false\n  compression: false\n  conflation: "off"\n'
  # the workload's defaults give way to the seed's, and the rate to a sweep (its options may be given)
  declare -A diffusion=([--subscribers]=1000 [--topics]=100000 [--publishers]=1 [--sweep-start]=25
                        [--sweep-step]=25 [--sweep-max]=2000)
  for k in --subscribers --topics --publishers; do [ "${given[$k]:-}" ] || unset "opt[$k]"; done
  for k in "${!diffusion[@]}"; do opt[$k]=${opt[$k]:-${diffusion[$k]}}; done
  unset "opt[--sweep-p99-below-ms]" "opt[--rate]"
  # 100,000 topics and 200 to 1,000 sessions each answered with every topic's name (streamed, a
  # window at a time); the heap also bounds direct memory
  heap=${HEAP:-2g}
else
  heap=${HEAP:-512m}
fi
if [ "$mode" = jetstream ]; then
  # issue 28's workload: five publishers, 100 topics; a short warm-up, a minute measured
  declare -A vs=([--publishers]=5 [--warmup]=10s [--duration]=60s)
  for k in "${!vs[@]}"; do [ "${given[$k]:-}" ] || opt[$k]=${vs[$k]}; done
  single=false
fi
# args [OPTION VALUE]...: the generator's options, one a line: the workload's with these replaced
# (VALUE 'drop' leaves OPTION out)
args() {
  local -A o=()
  local k
  for k in "${!opt[@]}"; do o[$k]=${opt[$k]}; done
  while [ $# -gt 0 ]; do o[$1]=$2; shift 2; done
  for k in "${!o[@]}"; do
    [ "${o[$k]}" = drop ] && continue
    printf '%s\n' "$k"
    [ -z "${o[$k]}" ] || printf '%s\n' "${o[$k]}"
  done
}
mapfile -t workload < <(args)
# a first run whose figures are not kept: the servers' JIT compilers take a core or more for a
# minute after start (five JVMs at once), which the measured runs must not pay for
if [ "$mode" = diffusion ]; then
  # at a few times the first step's rate: the compilers' thresholds are counts, so more calls compile sooner
  mapfile -t jit_warmup < <(args --rate "$((4 * ${opt[--sweep-start]}))" --sweep-start drop --sweep-step drop \
    --sweep-max drop --warmup 5s --duration 40s)
  # every topic published once before anything is measured: one publisher goes round the topics in order
  mapfile -t fill < <(args --subscribers 0 --rate 5000 --warmup 0s --duration "$(( (${opt[--topics]} + 4999) / 5000 ))s" \
    --sweep-start drop --sweep-step drop --sweep-max drop)
elif [ "$mode" = jetstream ]; then
  # at the highest rate, as the default mode's at its one rate
  mapfile -t jit_warmup < <(args --rate "$(tr , '\n' <<< "$rates" | sort -n | tail -1)" --warmup 5s --duration 20s)
else
  mapfile -t jit_warmup < <(args --warmup 5s --duration 20s)
fi
# --jit-warmup: five JVMs on two cores still compile (C2) for minutes under load, and a run after
# 20 s measures their compilers as much as the cluster (docs/benchmarks.md, "The usual workload
# after the compilers settle")
if [ -n "$jit_warmup_for" ]; then
  [[ $jit_warmup_for =~ ^[0-9]+(ms|s|m)$ ]] || { echo "--jit-warmup: a duration, e.g. 150s, was '$jit_warmup_for'"; exit 2; }
  for i in "${!jit_warmup[@]}"; do
    [ "${jit_warmup[$i]}" = --duration ] && jit_warmup[$((i + 1))]=$jit_warmup_for
  done
fi

out=benchmark/target/bench-cluster-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$out/config"
out=$(cd "$out" && pwd)
bench_jar=benchmark/target/ringcast-bench.jar
server_jar=server/target/ringcast-server.jar
if [ -z "${SKIP_BUILD:-}" ] && { [ ! -f "$bench_jar" ] || [ ! -f "$server_jar" ] || [ -n "$(find pom.xml */pom.xml \
      protocol/src/main cluster/src/main server/src/main client-java/src/main benchmark/src/main -newer "$bench_jar" \
      -print -quit)" ]; }; then
  echo "building $server_jar and $bench_jar"
  mvn -B -q -ntp -pl server,benchmark -am package -DskipTests
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in 8081 8082 8083 8084 8085 7801 7802 7803 7804 7805; do
  if $with_ringcast && port_in_use "$port"; then echo "port $port is in use (another cluster?): stop it first"; exit 3; fi
done

# the shipped node configs with the demo off, a fresh data directory each, the generator's
# anonymous clients allowed everything, and the mode's features
open='security:\n  anonymousRoles: ["everything"]\n  roles:\n    - name: "everything"\n      subscribe: ["#"]\n      publish: ["#"]\n'
for n in 1 2 3 4 5; do
  sed -e 's/^  enabled: true \(.*demo\)/  enabled: false \1/' \
      -e "s|^  dataDir: \"\".*|  dataDir: \"$out/data/node-$n\"|" "config/cluster/node-$n.yaml" > "$out/config/node-$n.yaml"
  grep -q "dataDir: \"$out/data/node-$n\"" "$out/config/node-$n.yaml" || { echo "node-$n: no dataDir line to set"; exit 3; }
  printf "$open$features" >> "$out/config/node-$n.yaml"
  if [ "$mode" = jetstream ]; then
    # JetStream 2.9 cannot fsync each write (it syncs every 2 minutes): neither do the nodes it is set beside
    if grep -q '^  commitFsync:' "$out/config/node-$n.yaml"; then
      sed -i 's/^  commitFsync:.*/  commitFsync: false/' "$out/config/node-$n.yaml"
    else
      sed -i 's/^cluster:$/cluster:\n  commitFsync: false/' "$out/config/node-$n.yaml"
    fi
    grep -q '^  commitFsync: false' "$out/config/node-$n.yaml" || { echo "node-$n: no cluster section for commitFsync"; exit 3; }
  fi
done
printf "server:\n  host: 127.0.0.1\n  port: 8081\nhistory:\n  length: 4096\n$open$features" > "$out/config/single.yaml"
machine_info "bench-cluster $mode" > "$out/machine.txt"
cat "$out/machine.txt"
servers=ws://127.0.0.1:8081/ws,ws://127.0.0.1:8082/ws,ws://127.0.0.1:8083/ws,ws://127.0.0.1:8084/ws,ws://127.0.0.1:8085/ws
logs=$out/cluster-logs
node_pids() { local n pids=; for n in 1 2 3 4 5; do pids+=${pids:+,}$(cat "$logs/node-$n.pid"); done; echo "$pids"; }
stop_cluster() { LOG_DIR="$logs" scripts/cluster.sh stop; }

# how busy the machine is: load average, the CPU counters of /proc/stat, and the busiest processes
# (other sessions' builds and tests share this machine)
machine_load() { # before|after NAME
  echo "$1 $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/$2.load"
  echo "$1 $(head -1 /proc/stat)" >> "$out/$2.cpu"
  { echo "== $1"; ps -eo pid,pcpu,etimes,args --sort=-pcpu | head -8 | cut -c1-200; } >> "$out/$2.ps"
}

# bench NAME ARGS...: one generator run into $out/NAME, its report in NAME.txt, the machine's load
# before and after in NAME.load, NAME.cpu and NAME.ps; a run that is not clean is reported, not fatal
bench() {
  local name=$1; shift
  echo "== $name: $(cut -d' ' -f1-3 /proc/loadavg) load average before"
  machine_load before "$name"
  local code=0
  java -jar "$bench_jar" "$@" --out "$out/$name" > "$out/$name.txt" 2>&1 || code=$?
  machine_load after "$name"
  grep -v ' WARN ' "$out/$name.txt" | tail -25
  echo "   exit code $code, load average after $(cut -d' ' -f1-3 /proc/loadavg)"
  node_metrics "$name"
}

# node_metrics NAME: each cluster node's error counts (NO_MAJORITY refusals...) and cluster gauges so far
node_metrics() {
  local n
  [ -d "$logs" ] || return 0
  case $1 in *jetstream*) return 0 ;; esac # a run against JetStream: nothing of Ringcast's to read
  for n in 1 2 3 4 5; do
    curl -s --max-time 5 "http://127.0.0.1:808$n/metrics" 2>/dev/null \
      | grep -E '^ringcast_(errors_total|cluster_)' | sed "s/^/node-$n /" || true
  done > "$out/$1-metrics.txt"
}

# leader: the node the others name as the Raft leader, from the first /health that names one. The
# one place that reads it: a cluster of several Raft groups may name a leader per group, and then
# this says which node the kill is for
leader() {
  local n
  for n in 1 2 3 4 5; do
    curl -s --max-time 2 "http://127.0.0.1:808$n/health" 2>/dev/null | python3 -c "import json,sys
try:
    print(json.load(sys.stdin)['cluster']['leader'] or '')
except Exception:
    pass" | grep . && return 0
  done
  return 1
}
leader_pid() { cat "$logs/node-${1#node-}.pid"; } # NAME (node-N): its pid

# kill_run NAME LEADER_FN PID_FN ARGS...: the generator run NAME with ARGS (and intervals of 100 ms),
# and the node that LEADER_FN names (asked before the run: a node that is busy may take seconds to
# answer under the load) killed with SIGKILL --kill-after s into the measured window; PID_FN NODE is
# its pid. The kill's node, pid and time in NAME/kill.json
kill_run() {
  local name=$1 leader_fn=$2 pid_fn=$3; shift 3
  local node pid kill_ms generator warmup_s code=0
  node=$($leader_fn) || { echo "no node names a leader"; exit 3; }
  machine_load before "$name"
  java -jar "$bench_jar" "$@" --report-interval 100ms --out "$out/$name" > "$out/$name.txt" 2>&1 &
  generator=$!
  for _ in $(seq 1 1200); do
    grep -q 'publishing' "$out/$name.txt" && break
    kill -0 "$generator" 2>/dev/null || break
    sleep 0.1 # polling the generator's report for the start of publishing
  done
  warmup_s=$(python3 -c "import re,sys; v=sys.argv[1]; m=re.fullmatch(r'(\d+)(ms|s|m)', v); \
print(int(m[1]) / {'ms': 1000, 's': 1, 'm': 1 / 60}[m[2]])" "${opt[--warmup]}")
  sleep "$(python3 -c "print($warmup_s + $kill_after)")" # the kill's moment in the measured window
  pid=$($pid_fn "$node")
  kill_ms=$(date +%s%3N)
  kill -9 "$pid"
  echo "killed $node (pid $pid) at $kill_ms ms"
  mkdir -p "$out/$name"
  printf '{"leader": "%s", "pid": %s, "killEpochMs": %s}\n' "$node" "$pid" "$kill_ms" > "$out/$name/kill.json"
  wait "$generator" || code=$?
  machine_load after "$name"
  node_metrics "$name"
  grep -v ' WARN ' "$out/$name.txt" | grep -v '^  interval' | tail -16
  echo "   exit code $code"
}

trap 'stop_cluster; jetstream_stop' EXIT # each stops what it started, if anything
if $with_ringcast; then
  echo "== five nodes (heap $heap each)"
  HEAP=$heap CONFIG_DIR="$out/config" LOG_DIR="$logs" scripts/cluster.sh start
  LOG_DIR="$logs" scripts/cluster.sh status | tee "$out/cluster-status.txt"
fi

# measured: the runs NAME-p99-10ms and NAME-p99-100ms (--diffusion) or the run NAME against SERVERS
measured() { # NAME SERVERS PIDS
  if [ "$mode" = diffusion ]; then
    bench "$1-p99-10ms" --servers "$2" "${workload[@]}" --server-pids "$3" --sweep
    bench "$1-p99-100ms" --servers "$2" "${workload[@]}" --server-pids "$3" --sweep --sweep-p99-below-ms 100
  else
    bench "$1" --servers "$2" "${workload[@]}" --server-pids "$3"
  fi
}

if [ "$mode" = jetstream ]; then
  JS_DIR=$out/jetstream
  if $with_jetstream; then
    echo "== five NATS JetStream servers${only:+ (alone: --only $only)}"
    jetstream_start
  fi
  js_servers=$(jetstream_servers)
  # run SYSTEM NAME ARGS...: the generator run NAME against SYSTEM (ringcast or jetstream, when it is
  # measured), its servers' pids measured
  run() {
    local system=$1 name=$2; shift 2
    if [ "$system" = jetstream ]; then
      $with_jetstream || return 0
      bench "$name" --target jetstream --servers "$js_servers" --server-pids "$(jetstream_pids)" "$@"
    else
      $with_ringcast || return 0
      bench "$name" --servers "$servers" --server-pids "$(node_pids)" "$@"
    fi
  }
  run ringcast warmup-ringcast "${jit_warmup[@]}"
  run jetstream warmup-jetstream "${jit_warmup[@]}"
  i=0
  for rate in ${rates//,/ }; do
    mapfile -t point < <(args --rate "$rate")
    # in turn, so that neither always runs on a machine the other has just warmed or loaded
    if [ $((i % 2)) = 0 ]; then order="jetstream ringcast"; else order="ringcast jetstream"; fi
    for system in $order; do run "$system" "$rate-$system" "${point[@]}"; done
    i=$((i + 1))
  done
  if $kill_phase; then
    mapfile -t point < <(args --rate "$kill_rate")
    if $with_jetstream; then
      echo "== JetStream at $kill_rate/s, the stream's leader killed $kill_after s into the measured window"
      kill_run kill-jetstream "jetstream_stream_leader $JS_STREAM" jetstream_pid \
        --target jetstream --servers "$js_servers" "${point[@]}"
    fi
    if $with_ringcast; then
      echo "== Ringcast at $kill_rate/s, the Raft leader killed $kill_after s into the measured window"
      kill_run kill-ringcast leader leader_pid --servers "$servers" "${point[@]}"
      LOG_DIR="$logs" scripts/cluster.sh status | tee "$out/cluster-status-after-kill.txt"
      grep -h 'LeaderWatch' "$logs"/node-*.log | sort > "$out/leader-changes.txt" || true
    fi
  fi
  jetstream_stop
else
  [ "$mode" = diffusion ] && bench fill-cluster --servers "$servers" "${fill[@]}"
  bench jit-warmup-cluster --servers "$servers" "${jit_warmup[@]}"
  measured cluster "$servers" "$(node_pids)"

  if $kill_phase && [ "$mode" = compare ]; then
    echo "== five nodes, the leader killed $kill_after s into the measured window"
    kill_run kill leader leader_pid --servers "$servers" "${workload[@]}"
    LOG_DIR="$logs" scripts/cluster.sh status | tee "$out/cluster-status-after-kill.txt"
    grep -h 'LeaderWatch' "$logs"/node-*.log | sort > "$out/leader-changes.txt" || true
  fi
fi
stop_cluster
trap - EXIT

if $single; then
  echo "== one node (heap $heap)"
  java "-Xmx$heap" -XX:+ExitOnOutOfMemoryError -jar "$server_jar" --config "$out/config/single.yaml" \
    > "$out/single.log" 2>&1 &
  single_pid=$!
  trap 'kill $single_pid 2>/dev/null || true' EXIT
  for _ in $(seq 1 300); do
    grep -q 'Ringcast listening on' "$out/single.log" && break
    kill -0 "$single_pid" 2>/dev/null || { cat "$out/single.log"; exit 3; }
    sleep 0.1 # polling the server's log for its start line
  done
  [ "$mode" = diffusion ] && bench fill-single --servers ws://127.0.0.1:8081/ws "${fill[@]}"
  bench jit-warmup-single --servers ws://127.0.0.1:8081/ws "${jit_warmup[@]}"
  measured single ws://127.0.0.1:8081/ws "$single_pid"
  kill "$single_pid"
  wait "$single_pid" 2>/dev/null || true
  trap - EXIT
fi
python3 scripts/lib/bench_cluster_summary.py "$mode" "$out" | tee "$out/summary.md"
