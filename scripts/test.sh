#!/usr/bin/env bash
# Runs the whole Ringcast test suite on a fresh machine: installs what is missing, then builds
# every module and runs every test (unit, integration with real servers and sockets, process tests,
# the browser client in Node and in headless Chromium), then checks the packages as a user gets
# them: mvn install, the Java client's javadoc from what was installed, the npm package.
# Usage: scripts/test.sh [extra maven args, for the test run]
#   SKIP_VERIFY=1 scripts/test.sh      the packaging checks alone (after an install without tests)
#   SKIP_PACKAGING=1 scripts/test.sh   the test run alone
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v java >/dev/null 2>&1 && java -version 2>&1 | grep -qE 'version "(1[7-9]|2[0-9])' || need_apt+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
# the browser client's unit tests run in Node; its browser tests in Debian's headless Chromium
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
# the npm package check packs and installs client-js (Debian's nodejs comes without npm)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
[ -x "${CHROMIUM_BIN:-/usr/bin/chromium}" ] || need_apt+=(chromium)
[ -x "${CHROMEDRIVER_BIN:-/usr/bin/chromedriver}" ] || need_apt+=(chromium-driver)
# the cluster fault suite cuts the network between nodes with iptables (scripts/cluster-faults.sh)
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
# the load generator's JetStream target is tested against a real server (JetStreamLoadTest)
command -v nats-server >/dev/null 2>&1 || need_apt+=(nats-server)
# and its Redis target against a real redis-server (RedisLoadTest, which fails without one)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

# Packaging (issue 15) is checked against what this run installs into the local repository
# (~/.m2/repository), from which this project's own artifacts are removed first, so that nothing
# passes on an artifact this run did not build.
local_repo="$HOME/.m2/repository"
if [ "${SKIP_VERIFY:-}" != 1 ]; then
  rm -rf "$local_repo/io/ringcast"
  # every test of every module, then each module installed (the packaging checks read those: one
  # build, where a second install -DskipTests took 22 s); two modules at a time where the reactor
  # allows it (the clients beside the cluster module, the benchmarks beside the integration tests):
  # the suite leaves a third of two cores idle waiting on elections, processes and paced loads
  # (14:18 -> 13:22 min on 2 cores, 2026-11-30). Maven's own JVM runs on C1 alone (.mvn/jvm.config:
  # a clean install -DskipTests in 34-36 s against 43-45 s, 50 s of CPU against 77, 2026-12-03); the
  # test JVMs keep C2 (the cluster module's tests on C1 alone took 179 s against 160)
  mvn -B -ntp -T 2 install "$@"
elif [ "${SKIP_PACKAGING:-}" != 1 ]; then
  rm -rf "$local_repo/io/ringcast"
  mvn -B -ntp -q install -DskipTests
fi
[ "${SKIP_PACKAGING:-}" = 1 ] && exit 0

echo "== packaging 1/3: what the run installed into $local_repo: every published module (protocol, cluster, server, client), with its -sources and -javadoc jars; the server jar has the project's LICENSE and NOTICE"
step_start=$SECONDS
version=$(sed -n 's|^  <version>\(.*\)</version>|\1|p' pom.xml | head -n 1)
for module in protocol cluster server client; do
  for suffix in .jar -sources.jar -javadoc.jar .pom; do
    f="$local_repo/io/ringcast/ringcast-$module/$version/ringcast-$module-$version$suffix"
    [ -s "$f" ] || { echo "packaging: $f was not installed" >&2; exit 1; }
  done
done
# the shaded server jar carries the project's LICENSE and NOTICE, not the first bundled library's
jar_meta=target/server-jar-meta
rm -rf "$jar_meta" && mkdir -p "$jar_meta"
(cd "$jar_meta" && jar xf ../../server/target/ringcast-server.jar META-INF/LICENSE META-INF/NOTICE)
cmp -s LICENSE "$jar_meta/META-INF/LICENSE" && cmp -s NOTICE "$jar_meta/META-INF/NOTICE" \
  || { echo "packaging: server/target/ringcast-server.jar's META-INF/LICENSE or NOTICE is not the project's" >&2; exit 1; }
echo "   installed: ringcast-{protocol,cluster,server,client}-$version .jar, -sources.jar, -javadoc.jar, .pom;" \
  "ringcast-server.jar carries LICENSE and NOTICE ($((SECONDS - step_start)) s)"

echo "== packaging 2/3: mvn -pl client-java javadoc:javadoc: the Java client's javadoc builds from the installed modules, with no warning"
step_start=$SECONDS
mvn -B -ntp -q -pl client-java javadoc:javadoc
echo "   client-java/target/reports/apidocs/index.html ($((SECONDS - step_start)) s)"

echo "== packaging 3/3: npm pack in client-js, the tarball installed offline into an empty project and imported by its name"
step_start=$SECONDS
(cd client-js && node --test scripts/pack-check.mjs)
echo "   ($((SECONDS - step_start)) s)"
