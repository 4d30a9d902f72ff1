# Screenshots of the project's pages as a visitor sees them: Debian's headless Chromium driven by
# chromium-driver over WebDriver, with curl alone. Sourced by scripts/screenshot-*.sh.
# Environment: CHROMIUM_BIN, CHROMEDRIVER_BIN (defaults /usr/bin/chromium, /usr/bin/chromedriver).

webdriver_browser="${CHROMIUM_BIN:-/usr/bin/chromium}"
webdriver_driver="${CHROMEDRIVER_BIN:-/usr/bin/chromedriver}"
webdriver_port=9515
webdriver_pid=""

# webdriver_check NAME: fails (exit 2) naming what is missing
webdriver_check() {
  for tool in "$webdriver_browser" "$webdriver_driver"; do
    [ -x "$tool" ] || { echo "$1: $tool is missing (apt-get install chromium chromium-driver)" >&2; exit 2; }
  done
  command -v curl >/dev/null || { echo "$1: curl is missing" >&2; exit 2; }
}

# await_url NAME URL SECONDS: until URL answers
await_url() {
  for _ in $(seq 1 $(( $3 * 10 ))); do
    curl -fsS -o /dev/null "$2" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "$1: $2 did not answer within $3 s" >&2
  exit 1
}

# webdriver_start NAME LOG: starts chromium-driver (stopped by webdriver_stop)
webdriver_start() {
  "$webdriver_driver" --port="$webdriver_port" > "$2" 2>&1 &
  webdriver_pid=$!
  await_url "$1" "http://localhost:$webdriver_port/status" 30
}

webdriver_stop() {
  [ -z "$webdriver_pid" ] || kill "$webdriver_pid" 2>/dev/null || true
}

# webdriver_screenshot URL OUT SETTLE [WIDTH,HEIGHT]: opens URL in a new headless window, lets the
# page run SETTLE seconds (nothing to await but time passing: its charts fill), saves a PNG to OUT
webdriver_screenshot() {
  local wd="http://localhost:$webdriver_port" size="${4:-1400,1000}" session
  session=$(curl -fsS -X POST "$wd/session" -H 'Content-Type: application/json' -d '{
    "capabilities": {"alwaysMatch": {"goog:chromeOptions": {
      "binary": "'"$webdriver_browser"'",
      "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-dev-shm-usage", "--window-size='"$size"'", "--hide-scrollbars"]}}}}' \
    | sed -E 's/.*"sessionId":"([^"]+)".*/\1/')
  curl -fsS -X POST "$wd/session/$session/url" -H 'Content-Type: application/json' -d '{"url": "'"$1"'"}' > /dev/null
  sleep "$3"
  curl -fsS "$wd/session/$session/screenshot" | sed -E 's/.*"value":"([^"]+)".*/\1/' | base64 -d > "$2"
  curl -fsS -X DELETE "$wd/session/$session" > /dev/null
}
