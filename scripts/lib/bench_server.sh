# shellcheck shell=bash
# What the end-to-end bench scripts share: a server config that lets the load generator's anonymous
# clients publish and subscribe everywhere, and a server started the way a user starts one
# (scripts/ringcast, with its JVM options) and waited for until it listens.

# bench_open_config PORT [SERVER_LINES] [MORE_YAML]: the config, on 127.0.0.1:PORT; SERVER_LINES are
# more keys of the server section (each "  key: value\n"), MORE_YAML more sections
bench_open_config() {
  printf 'server:\n  host: 127.0.0.1\n  port: %s\n%ssecurity:\n  anonymousRoles: ["everything"]\n  roles:\n    - name: "everything"\n      subscribe: ["#"]\n      publish: ["#"]\n%s' \
    "$1" "${2:-}" "${3:-}"
}

# bench_start_server JAR CONFIG LOG: starts JAR with CONFIG through scripts/ringcast (SERVER_JAVA_OPTS
# after its JVM options), sets server_pid, and returns once the server listens (exit 3 if it does not)
bench_start_server() {
  RINGCAST_JAR=$1 JAVA_OPTS=${SERVER_JAVA_OPTS:-} scripts/ringcast --config "$2" > "$3" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    if grep -q 'Ringcast listening on' "$3"; then return 0; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then cat "$3"; echo "server did not start"; exit 3; fi
    sleep 0.1 # polling the server's log for its start line; there is nothing to wait on
  done
  echo "server did not listen within 30 s"; exit 3
}

# bench_stop_server: stops the server bench_start_server started
bench_stop_server() {
  kill "$server_pid"
  wait "$server_pid" || true
  server_pid=
}
