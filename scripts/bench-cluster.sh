#!/usr/bin/env bash
# The same load-generator workload against the local five-node cluster and against one node, one
# after the other on this machine (docs/benchmarks.md, "Cluster against one node").
#
# Usage: scripts/bench-cluster.sh [load generator options, e.g. --rate 2000 --duration 30s]
# Defaults: 100 subscribers on '#', 100 topics of 200 B, 1,000 publishes/s from 4 publishers,
# 30 s measured after 10 s of warm-up. Results: benchmark/target/bench-cluster-<UTC time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh

out=benchmark/target/bench-cluster-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$out/config"
bench_jar=benchmark/target/ringcast-bench.jar
server_jar=server/target/ringcast-server.jar
if [ ! -f "$bench_jar" ] || [ ! -f "$server_jar" ]; then
  mvn -B -q -ntp -pl server,benchmark -am package -DskipTests
fi
workload=(--subscribers 100 --topics 100 --payload-bytes 200 --rate 1000 --publishers 4 --warmup 10s --duration 30s "$@")

# the shipped node configs with the demo off and the generator's anonymous clients allowed everything
open='security:\n  anonymousRoles: ["everything"]\n  roles:\n    - name: "everything"\n      subscribe: ["#"]\n      publish: ["#"]\n'
for n in 1 2 3 4 5; do
  sed 's/^  enabled: true \(.*demo\)/  enabled: false \1/' "config/cluster/node-$n.yaml" > "$out/config/node-$n.yaml"
  printf "$open" >> "$out/config/node-$n.yaml"
done
machine_info "cluster against one node" > "$out/machine.txt"

echo "== five nodes"
CONFIG_DIR="$out/config" LOG_DIR="$out/cluster-logs" scripts/cluster.sh start
trap 'LOG_DIR="$out/cluster-logs" scripts/cluster.sh stop' EXIT
java -jar "$bench_jar" --servers ws://127.0.0.1:8081/ws,ws://127.0.0.1:8082/ws,ws://127.0.0.1:8083/ws,ws://127.0.0.1:8084/ws,ws://127.0.0.1:8085/ws \
  "${workload[@]}" --out "$out/cluster" | tee "$out/cluster.txt"
LOG_DIR="$out/cluster-logs" scripts/cluster.sh stop
trap - EXIT

echo "== one node"
printf "server:\n  host: 127.0.0.1\n  port: 8081\nhistory:\n  length: 4096\n$open" > "$out/config/single.yaml"
java -Xmx256m -jar "$server_jar" --config "$out/config/single.yaml" > "$out/single.log" 2>&1 &
single=$!
trap 'kill $single 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do grep -q 'Ringcast listening on' "$out/single.log" && break; sleep 0.1; done # polling its start line
java -jar "$bench_jar" --servers ws://127.0.0.1:8081/ws "${workload[@]}" --out "$out/single" | tee "$out/single.txt"
echo "results: $out"
