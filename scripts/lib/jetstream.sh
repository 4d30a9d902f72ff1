# shellcheck shell=bash
# Sourced by scripts/bench-cluster.sh --vs-jetstream: a five-node NATS JetStream cluster on loopback,
# the system Ringcast is measured against. Debian's nats-server (2.9.10 in bookworm), installed when
# missing; five processes n1..n5, each with its own config, store directory, log and pid file under
# JS_DIR; client ports 4221-4225, cluster routes 6221-6225, monitoring 8221-8225. The stream itself
# is created by the load generator (--target jetstream), which checks its settings at every run.
#
#   JS_DIR=DIR jetstream_start     writes the configs, starts the five, waits for the meta leader
#   jetstream_servers              nats://127.0.0.1:4221,...   (the generator's --servers)
#   jetstream_pids                 the five pids, comma-separated (the generator's --server-pids)
#   jetstream_stream_leader STREAM the server name (n1..n5) leading STREAM ($JS_STREAM), from /jsz
#   jetstream_pid NAME             the pid of server NAME
#   jetstream_stop                 stops every process jetstream_start started (twice is fine)

JS_NODES=(1 2 3 4 5)
JS_CLUSTER_NAME=ringcast-bench
JS_STREAM=RINGCAST_BENCH # the load generator's stream (JetStreamStream.NAME)

# jetstream_install: Debian's nats-server, when there is none on the PATH
jetstream_install() {
  command -v nats-server > /dev/null && return 0
  echo "installing Debian's nats-server"
  apt-get update -qq && apt-get install -y -qq nats-server > /dev/null
  # the package enables a systemd service on the default port; on a machine that runs systemd it is
  # not ours to stop, and it does not use the ports below
  command -v nats-server > /dev/null || { echo "nats-server did not install"; return 3; }
}

jetstream_servers() {
  local n urls=
  for n in "${JS_NODES[@]}"; do urls+=${urls:+,}nats://127.0.0.1:422$n; done
  echo "$urls"
}

jetstream_pid() { cat "$JS_DIR/n${1#n}.pid"; }

jetstream_pids() {
  local n pids=
  for n in "${JS_NODES[@]}"; do pids+=${pids:+,}$(jetstream_pid "$n"); done
  echo "$pids"
}

# jetstream_config N: node N's config. No sync_interval: 2.9.10 refuses the field (later versions'
# "sync_interval: always" fsyncs each write); its file store syncs every 2 minutes, and a write is
# acked once a majority holds it in its page cache. The Ringcast nodes run with
# cluster.commitFsync: false beside it.
jetstream_config() {
  local n=$1 m routes=
  for m in "${JS_NODES[@]}"; do routes+="${routes:+, }nats-route://127.0.0.1:622$m"; done
  cat <<EOF
server_name: n$n
listen: 127.0.0.1:422$n
http: 127.0.0.1:822$n
max_payload: 1MB
jetstream {
  store_dir: "$JS_DIR/store/n$n"
  max_memory_store: 256MB
  max_file_store: 16GB
}
cluster {
  name: $JS_CLUSTER_NAME
  listen: 127.0.0.1:622$n
  routes: [$routes]
}
EOF
}

# jetstream_get N PATH: GET PATH of node N's monitoring port (empty on failure)
jetstream_get() { curl -s --max-time 2 "http://127.0.0.1:822$1$2" 2>/dev/null || true; }

jetstream_start() {
  : "${JS_DIR:?JS_DIR: where the configs, stores, logs and pid files go}"
  jetstream_install || return 3
  local n port
  for n in "${JS_NODES[@]}"; do
    for port in "422$n" "622$n" "822$n"; do
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "port $port is in use (another nats-server?): stop it first"; return 3
      fi
    done
  done
  mkdir -p "$JS_DIR"
  echo "$(nats-server --version) in $JS_DIR"
  for n in "${JS_NODES[@]}"; do
    jetstream_config "$n" > "$JS_DIR/n$n.conf"
    nats-server -c "$JS_DIR/n$n.conf" > "$JS_DIR/n$n.log" 2>&1 &
    echo $! > "$JS_DIR/n$n.pid"
    disown # no job report when the kill takes it; jetstream_stop stops it by its pid
  done
  # ready: every node healthy (JetStream up and current) and one names the meta leader
  local leader=
  for _ in $(seq 1 300); do
    local healthy=0
    for n in "${JS_NODES[@]}"; do
      kill -0 "$(jetstream_pid "$n")" 2>/dev/null || { tail -20 "$JS_DIR/n$n.log"; echo "n$n exited"; return 3; }
      jetstream_get "$n" /healthz | grep -q '"ok"' && healthy=$((healthy + 1))
    done
    leader=$(jetstream_get 1 /jsz | python3 -c "import json,sys
try:
    print(json.load(sys.stdin).get('meta_cluster', {}).get('leader') or '')
except Exception:
    pass")
    [ "$healthy" = "${#JS_NODES[@]}" ] && [ -n "$leader" ] && break
    sleep 0.2 # polling the monitoring ports: nothing to wait on
  done
  [ -n "$leader" ] || { echo "no JetStream meta leader within 60 s (logs: $JS_DIR)"; return 3; }
  echo "JetStream: five nodes up, meta leader $leader, pids $(jetstream_pids)"
}

# jetstream_stream_leader STREAM: the server name leading STREAM, as the first node that answers says
jetstream_stream_leader() {
  local n
  for n in "${JS_NODES[@]}"; do
    jetstream_get "$n" "/jsz?accounts=true&streams=true" | python3 -c "import json,sys
try:
    for account in json.load(sys.stdin).get('account_details') or []:
        for stream in account.get('stream_detail') or []:
            if stream['name'] == sys.argv[1] and (stream.get('cluster') or {}).get('leader'):
                print(stream['cluster']['leader'])
except Exception:
    pass" "$1" | grep . && return 0
  done
  return 1
}

# jetstream_stop: SIGTERM to every node still running, SIGKILL to any that has not exited after 10 s
jetstream_stop() {
  [ -n "${JS_DIR:-}" ] || return 0
  local n pid pids=()
  for n in "${JS_NODES[@]}"; do
    [ -f "$JS_DIR/n$n.pid" ] || continue
    pid=$(jetstream_pid "$n")
    kill "$pid" 2>/dev/null && pids+=("$pid")
    rm -f "$JS_DIR/n$n.pid"
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1 # waiting for the node's graceful shutdown
    done
    kill -9 "$pid" 2>/dev/null || true
  done
  [ ${#pids[@]} -eq 0 ] || echo "JetStream: stopped ${#pids[@]} node(s)"
}
