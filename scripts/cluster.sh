#!/usr/bin/env bash
# A local five-node cluster on loopback, from config/cluster/node-1.yaml .. node-5.yaml
# (clients on ws://127.0.0.1:8081/ws .. 8085; see docs/clustering.md).
#
# Usage: scripts/cluster.sh start    build the jar if needed, start the five nodes in the background,
#                                    wait until each serves clients with a view of five (on the
#                                    ratis engine, which has no views: until each caught up)
#        scripts/cluster.sh stop     SIGTERM every node and wait for it
#        scripts/cluster.sh stop 3   the same for node-3 alone; `start` then starts it again (the
#                                    nodes still running are left alone): a one-node restart
#        scripts/cluster.sh status   one line per node from its /health
# Logs and pid files: target/cluster/node-N.log, target/cluster/node-N.pid. Raft logs and snapshots:
# data/node-N (cluster.dataDir); delete them for a cluster that starts empty. The nodes encrypt what
# they send each other with the secret in data/cluster.secret (cluster.secretFile), made at the first start.
# Environment: HEAP (each node's -Xmx, default 256m), NODES (how many to start, default 5),
#              CONFIG_DIR (where node-N.yaml are, default config/cluster; the ports are read from the
#              defaults 8081..8085, so keep them), LOG_DIR (default target/cluster), JAVA_OPTS (more
#              JVM options for every node; {node} in them becomes node-N, e.g. for a flight
#              recording each: JAVA_OPTS='-XX:StartFlightRecording=filename=/tmp/{node}.jfr'),
#              SECRET_FILE (the cluster's secret, default data/cluster.secret; empty: in the clear).
set -euo pipefail
cd "$(dirname "$0")/.."

jar=server/target/ringcast-server.jar
dir=${LOG_DIR:-target/cluster}
config_dir=${CONFIG_DIR:-config/cluster}
nodes=${NODES:-5}
heap=${HEAP:-256m}

health() { # node -> its /health JSON, or nothing
  curl -s --max-time 2 "http://127.0.0.1:808$1/health" 2>/dev/null || true
}

cluster_field() { # json, python expression over c (the cluster object) -> value
  python3 -c "import json,sys
try:
    c = json.loads(sys.argv[1]).get('cluster', {})
    print($2)
except Exception:
    print('')" "$1"
}

start() {
  if [ ! -f "$jar" ] || [ -n "$(find pom.xml */pom.xml protocol/src/main cluster/src/main server/src/main \
        -newer "$jar" -print -quit)" ]; then
    echo "building $jar"
    mvn -B -q -ntp -pl server -am package -DskipTests
  fi
  mkdir -p "$dir"
  # encrypted between nodes with a secret of this cluster's own (cluster.secretFile), made once and
  # kept beside the Raft logs; SECRET_FILE= (empty) runs them in the clear, as the ratis engine must
  secret_file=${SECRET_FILE-data/cluster.secret}
  if [ "${RINGCAST_CLUSTER_ENGINE:-jgroups}" = ratis ]; then
    secret_file=""
  fi
  if [ -n "$secret_file" ] && [ ! -f "$secret_file" ]; then
    mkdir -p "$(dirname "$secret_file")"
    (umask 077 && head -c 48 /dev/urandom | base64 > "$secret_file")
    echo "made the cluster's secret: $secret_file (cluster.secretFile)"
  fi
  if [ -n "$secret_file" ]; then
    export RINGCAST_CLUSTER_SECRETFILE="$secret_file" # for every node below
  fi
  for n in $(seq 1 "$nodes"); do
    if [ -f "$dir/node-$n.pid" ] && kill -0 "$(cat "$dir/node-$n.pid")" 2>/dev/null; then
      echo "node-$n is running already (pid $(cat "$dir/node-$n.pid"))"
      continue
    fi
    # the shipped launcher's JVM options (a heap from 64 MB, bounded direct memory:
    # docs/operations.md#memory), this heap bound, G1 instead of the serial collector (a node's
    # engine allocates ~30 MB/s at 2,000 publishes/s, and serial's full collections paused nodes
    # for 0.3-0.5 s: docs/clustering.md#memory), then JAVA_OPTS
    RINGCAST_JAR="$jar" JAVA_OPTS="-Xmx$heap -XX:+UseG1GC ${JAVA_OPTS:+${JAVA_OPTS//\{node\}/node-$n}}" \
      scripts/ringcast --config "$config_dir/node-$n.yaml" > "$dir/node-$n.log" 2>&1 &
    echo $! > "$dir/node-$n.pid"
    if [ "$n" = 1 ]; then
      # the others join node-1's view at once instead of all waiting for a coordinator; it
      # serves clients only once a majority elected a leader, so wait until it has joined
      for _ in $(seq 1 300); do
        grep -q "cluster: joined as" "$dir/node-1.log" 2>/dev/null && break
        kill -0 "$(cat "$dir/node-1.pid")" 2>/dev/null || break
        sleep 0.2 # polling node-1's log until it has joined
      done
    fi
  done
  for n in $(seq 1 "$nodes"); do
    for _ in $(seq 1 600); do
      h=$(health "$n")
      if [ -n "$h" ] && [ "$(cluster_field "$h" "c.get('ready') and (len(c.get('view', [])) if c.get('engine') != 'ratis' else $nodes)")" = "$nodes" ]; then
        break
      fi
      if ! kill -0 "$(cat "$dir/node-$n.pid")" 2>/dev/null; then
        tail -20 "$dir/node-$n.log"; echo "node-$n stopped: see $dir/node-$n.log"; stop; exit 1
      fi
      sleep 0.2 # polling /health until the node serves with the whole view
    done
    if [ "$(cluster_field "$(health "$n")" "c.get('ready') and (len(c.get('view', [])) if c.get('engine') != 'ratis' else $nodes)")" != "$nodes" ]; then
      echo "node-$n did not see a view of $nodes within 120 s: see $dir/node-$n.log"; stop; exit 1
    fi
    echo "node-$n: ws://127.0.0.1:808$n/ws  (demo page http://127.0.0.1:808$n/, pid $(cat "$dir/node-$n.pid"))"
  done
}

stop() { # [node numbers]: those, or every node
  for n in ${*:-$(seq 1 5)}; do
    pidfile=$dir/node-$n.pid
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done # waiting for the exit
      if kill -0 "$pid" 2>/dev/null; then echo "node-$n (pid $pid) did not stop in 30 s; killing it"; kill -9 "$pid"; fi
      echo "node-$n stopped"
    fi
    rm -f "$pidfile"
  done
}

status() {
  for n in $(seq 1 5); do
    h=$(health "$n")
    if [ -z "$h" ]; then
      echo "node-$n: down"
    else
      echo "node-$n: up, $(cluster_field "$h" "'view of %d, leader %s, term %d, commit index %d, %d publishes queued' % (len(c['view']), c['leader'] or 'NONE (no majority)', c['term'], c['commitIndex'], c['queuedPublishes'])")"
    fi
  done
}

case ${1:-} in
  start) start ;;
  stop) shift; stop "$@" ;;
  status) status ;;
  *) echo "usage: $0 start|stop [N...]|status"; exit 2 ;;
esac
