#!/usr/bin/env bash
# The README's picture of the demo page (docs/img/demo-page.png), taken the way a visitor sees it:
# a node on the repository's config (config/server.yaml, demo publisher on), Debian's headless
# Chromium driven by chromium-driver over WebDriver (curl, no other tool), the page left running
# SETTLE seconds (default 30) so that its rates, latencies and sparklines are past their start.
# Run it on a quiet machine: the page shows the latency it measures.
#
# Usage: scripts/screenshot-demo.sh [output.png]   (default docs/img/demo-page.png)
# Environment: PORT (default 8080, the config's), SETTLE, CHROMIUM_BIN, CHROMEDRIVER_BIN, SKIP_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-docs/img/demo-page.png}"
port="${PORT:-8080}"
settle="${SETTLE:-30}"
. scripts/lib/webdriver.sh
webdriver_check screenshot-demo
[ -n "${SKIP_BUILD:-}" ] || mvn -B -ntp -q -pl server -am package -DskipTests

work="$(mktemp -d)"
server_pid=""
cleanup() {
  webdriver_stop
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

scripts/ringcast > "$work/server.log" 2>&1 &
server_pid=$!
await_url screenshot-demo "http://localhost:$port/health" 60
# the demo publisher creates its topics in its first second or so: the page's subscribe should
# match every one, so wait until /health's topic count holds still across half a second
topics=-1
for _ in $(seq 1 60); do
  now=$(curl -fsS "http://localhost:$port/health" | sed -E 's/.*"topics":([0-9]+).*/\1/')
  [ "$now" -gt 0 ] && [ "$now" = "$topics" ] && break
  topics=$now
  sleep 0.5
done

webdriver_start screenshot-demo "$work/driver.log"
webdriver_screenshot "http://localhost:$port/" "$out" "$settle"
echo "screenshot-demo: $out ($(wc -c < "$out") bytes) after ${settle} s"
