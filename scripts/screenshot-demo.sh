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
browser="${CHROMIUM_BIN:-/usr/bin/chromium}"
driver="${CHROMEDRIVER_BIN:-/usr/bin/chromedriver}"
for tool in "$browser" "$driver"; do
  [ -x "$tool" ] || { echo "screenshot-demo: $tool is missing (apt-get install chromium chromium-driver)" >&2; exit 2; }
done
command -v curl >/dev/null || { echo "screenshot-demo: curl is missing" >&2; exit 2; }
[ -n "${SKIP_BUILD:-}" ] || mvn -B -ntp -q -pl server -am package -DskipTests

work="$(mktemp -d)"
server_pid=""; driver_pid=""
cleanup() {
  [ -z "$driver_pid" ] || kill "$driver_pid" 2>/dev/null || true
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# await_url URL SECONDS: until URL answers
await_url() {
  for _ in $(seq 1 $(( $2 * 10 ))); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "screenshot-demo: $1 did not answer within $2 s" >&2
  exit 1
}

scripts/ringcast > "$work/server.log" 2>&1 &
server_pid=$!
await_url "http://localhost:$port/health" 60
# the demo publisher creates its topics in its first second or so: the page's subscribe should
# match every one, so wait until /health's topic count holds still across half a second
topics=-1
for _ in $(seq 1 60); do
  now=$(curl -fsS "http://localhost:$port/health" | sed -E 's/.*"topics":([0-9]+).*/\1/')
  [ "$now" -gt 0 ] && [ "$now" = "$topics" ] && break
  topics=$now
  sleep 0.5
done

driver_port=9515
"$driver" --port="$driver_port" > "$work/driver.log" 2>&1 &
driver_pid=$!
await_url "http://localhost:$driver_port/status" 30

wd="http://localhost:$driver_port"
session=$(curl -fsS -X POST "$wd/session" -H 'Content-Type: application/json' -d '{
  "capabilities": {"alwaysMatch": {"goog:chromeOptions": {
    "binary": "'"$browser"'",
    "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-dev-shm-usage", "--window-size=1400,1000", "--hide-scrollbars"]}}}}' \
  | sed -E 's/.*"sessionId":"([^"]+)".*/\1/')
curl -fsS -X POST "$wd/session/$session/url" -H 'Content-Type: application/json' \
  -d '{"url": "http://localhost:'"$port"'/"}' > /dev/null
sleep "$settle" # the page runs; nothing to await but time passing
curl -fsS "$wd/session/$session/screenshot" | sed -E 's/.*"value":"([^"]+)".*/\1/' | base64 -d > "$out"
curl -fsS -X DELETE "$wd/session/$session" > /dev/null
echo "screenshot-demo: $out ($(wc -c < "$out") bytes) after ${settle} s"
