#!/usr/bin/env bash
# The picture of the status page on a five-node cluster in docs/operations.md
# (docs/img/status-cluster.png): the local cluster of scripts/cluster.sh, its nodes loaded by HTTP
# publishes through a follower (node 1 also runs the demo publisher), the status page of the
# cluster's leader (whose cluster panel shows each member's lag) left running SETTLE seconds
# (default 40) in Debian's headless Chromium, then the cluster stopped again.
# Stops a local cluster already running first (scripts/cluster.sh stop).
#
# Usage: scripts/screenshot-status.sh [output.png]   (default docs/img/status-cluster.png)
# Environment: SETTLE, RATE (HTTP publishes a second, default 200), CHROMIUM_BIN, CHROMEDRIVER_BIN,
#              SKIP_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-docs/img/status-cluster.png}"
settle="${SETTLE:-40}"
rate="${RATE:-200}"
. scripts/lib/webdriver.sh
webdriver_check screenshot-status
[ -n "${SKIP_BUILD:-}" ] || mvn -B -ntp -q -pl server -am package -DskipTests

work="$(mktemp -d)"
load_pid=""
sub_pids=()
cleanup() {
  webdriver_stop
  [ -z "$load_pid" ] || kill "$load_pid" 2>/dev/null || true
  for pid in "${sub_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  scripts/cluster.sh stop > /dev/null 2>&1 || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

scripts/cluster.sh stop > /dev/null 2>&1 || true
scripts/cluster.sh start
leader=$(curl -fsS http://127.0.0.1:8081/health | python3 -c 'import json,sys; print(json.load(sys.stdin)["cluster"]["leader"])')
leader_port=$((8080 + ${leader#node-}))
follower_port=$((8080 + ${leader#node-} % 5 + 1))
echo "screenshot-status: leader $leader (http://127.0.0.1:$leader_port/status); publishing $rate/s over HTTP through node $((follower_port - 8080))"

# a batch of rate/10 publishes every 100 ms, over ten topics, to a follower: it hands them to the leader
(
  batch=$(python3 -c "import json; n=max(1, $rate // 10); print(json.dumps({'publishes': [
      {'topic': 'demo/load/t%d' % (i % 10), 'value': {'n': i}} for i in range(n)]}))")
  while true; do
    curl -fsS -o /dev/null -X POST "http://127.0.0.1:$follower_port/api/publish/batch" -d "$batch" || true
    sleep 0.1
  done
) &
load_pid=$!
# two WebSocket subscribers on the leader, for connections and deliveries to chart
for _ in 1 2; do
  scripts/ringcast sub "ws://127.0.0.1:$leader_port/ws" 'demo/#' > /dev/null 2>&1 &
  sub_pids+=("$!")
done

webdriver_start screenshot-status "$work/driver.log"
webdriver_screenshot "http://127.0.0.1:$leader_port/status" "$out" "$settle" 1400,1150
echo "screenshot-status: $out ($(wc -c < "$out") bytes) after ${settle} s"
