#!/usr/bin/env bash
# Runs the whole Ringcast test suite on a fresh machine: installs what is missing, then builds
# every module and runs every test (unit, integration with real servers and sockets, process tests,
# the browser client in Node and in headless Chromium).
# Usage: scripts/test.sh [extra maven args]
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v java >/dev/null 2>&1 && java -version 2>&1 | grep -qE 'version "(1[7-9]|2[0-9])' || need_apt+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
# the browser client's unit tests run in Node; its browser tests in Debian's headless Chromium
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
[ -x "${CHROMIUM_BIN:-/usr/bin/chromium}" ] || need_apt+=(chromium)
[ -x "${CHROMEDRIVER_BIN:-/usr/bin/chromedriver}" ] || need_apt+=(chromium-driver)
# the cluster fault suite cuts the network between nodes with iptables (scripts/cluster-faults.sh)
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

exec mvn -B -ntp verify "$@"
