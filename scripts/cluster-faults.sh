#!/usr/bin/env bash
# The cluster fault suite of issue 18: five real node processes, each on its own loopback address
# (127.0.0.11 .. 127.0.0.15), under load from publishers and subscribers, through six faults (a
# partition, a bridge, kill -9 of a leader, of two nodes, SIGSTOP of a leader, a rolling restart;
# of issue 28: a one-way cut from a leader, a leader isolated from every node, a flapping partition),
# each judged by a checker of every acked update against every delivery.
# Everything (the nodes, the clients, the checker) runs inside a private network namespace
# (unshare -n) whose firewall the suite changes with iptables: it needs root, and never touches the
# machine's own network. Reports: integration-tests/target/cluster-faults/<fault>.{json,txt}.
#
# Usage: scripts/cluster-faults.sh [--quick] [fault...]
#   faults: partition bridge kill-leader kill-two pause-leader rolling-restart one-way-cut
#           isolated-leader flapping-partition (all when none named)
#   --quick: the CI durations (cuts of 8 s instead of 40 s, and so on)
# With RINGCAST_FAULTS_CLASSPATH set (the JUnit test does), it runs on that classpath without Maven.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "cluster-faults: needs root (unshare -n and iptables in the private namespace); run it as root or with sudo" >&2
  exit 2
fi
for tool in unshare ip iptables ss; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "cluster-faults: '$tool' is missing (scripts/test.sh installs iptables; unshare, ip and ss come with util-linux and iproute2)" >&2
    exit 2
  fi
done

cp="${RINGCAST_FAULTS_CLASSPATH:-}"
if [ -z "$cp" ]; then
  echo "building the server jar and the suite (no install)"
  mvn -B -ntp -q -pl server -am package -DskipTests
  mvn -B -ntp -q -pl integration-tests -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/faults.classpath -Dmdep.includeScope=test
  cp="integration-tests/target/test-classes:$(cat integration-tests/target/faults.classpath)"
  cp="$(pwd)/${cp}"
fi
[ -f server/target/ringcast-server.jar ] || { echo "cluster-faults: server/target/ringcast-server.jar is missing: mvn -pl server -am package -DskipTests" >&2; exit 2; }

java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
# the suite refuses to run in the namespace it was started from: its firewall is not the suite's to change
RINGCAST_FAULTS_OUTER_NETNS="$(readlink /proc/self/ns/net)"
export RINGCAST_FAULTS_CP="$cp" RINGCAST_FAULTS_JAVA="$java" RINGCAST_FAULTS_OUTER_NETNS
# lo comes up down in a new namespace; 127.0.0.0/8 is all on lo, so 127.0.0.11..15 need no setup
exec unshare -n bash -c 'set -e; ip link set lo up; cd integration-tests
  exec "$RINGCAST_FAULTS_JAVA" -ea -Xmx768m -cp "$RINGCAST_FAULTS_CP" io.ringcast.it.cluster.faults.FaultSuite "$@"' \
  cluster-faults "$@"
