#!/usr/bin/env bash
# Fuzzes Ringcast's parsers with Jazzer (coverage-guided, in-process) for DURATION each.
#
#   scripts/fuzz.sh                         every fuzz test, 10m each
#   scripts/fuzz.sh delta-apply 1h          one target
#   scripts/fuzz.sh list                    the targets
#
# A target is fuzzed in its own JVM (Jazzer fuzzes one @FuzzTest per run). A crash stops that
# target, fails its run and is saved by Jazzer as crash-<sha1> in the test's inputs directory
# (src/test/resources/<package>/<Class>Inputs/<method>/), where `mvn test` replays it from then on:
# fix the bug, keep the file. Inputs that found new coverage go to <module>/.cifuzz-corpus/, which
# later runs start from (not committed). docs/operations.md, "Fuzzing".
set -euo pipefail

cd "$(dirname "$0")/.."

# target name -> module, Class#method
declare -A TARGETS=(
  [frame]="protocol io.ringcast.protocol.WireCodecFuzzTest#anyFrameDecodesFaithfullyOrFailsWithACodeAndReason"
  [delta-apply]="protocol io.ringcast.protocol.DeltaFuzzTest#applyGivesAValueOrADeltaFormatException"
  [delta-roundtrip]="protocol io.ringcast.protocol.DeltaFuzzTest#encodedDeltaAppliedToItsBaseGivesTheTargetExactly"
  [path]="protocol io.ringcast.protocol.PathAndSelectorFuzzTest#anyTextIsAPathMatchedByItsOwnSelectorOrAnInvalidPath"
  [selector]="protocol io.ringcast.protocol.PathAndSelectorFuzzTest#anyTextIsASelectorOrAnInvalidSelector"
  [config-text]="server io.ringcast.server.config.ConfigLoaderFuzzTest#anyTextGivesAConfigOrAConfigException"
  [config-structured]="server io.ringcast.server.config.ConfigLoaderFuzzTest#structuredYamlGivesAConfigOrAnErrorNamingTheKey"
)
ORDER=(frame delta-apply delta-roundtrip path selector config-text config-structured)

target="${1:-all}"
duration="${2:-10m}"

if [[ "$target" == "list" ]]; then
  for t in "${ORDER[@]}"; do printf '%-18s %s\n' "$t" "${TARGETS[$t]}"; done
  exit 0
fi
if [[ "$target" == "all" ]]; then
  selected=("${ORDER[@]}")
elif [[ -n "${TARGETS[$target]:-}" ]]; then
  selected=("$target")
else
  echo "unknown target '$target'; one of: all ${ORDER[*]}" >&2
  exit 2
fi

# the fuzz tests run from the modules' test classes: build them (and what they depend on) once
mvn -B -q -ntp -pl protocol,server -am install -DskipTests

failed=()
for t in "${selected[@]}"; do
  read -r module test <<<"${TARGETS[$t]}"
  echo "== fuzzing $t ($test) for $duration"
  # -Djazzer.max_duration overrides the @FuzzTest(maxDuration) of the source; -Djazzer.hooks=true
  # turns on Jazzer's bug detectors, off for the seed-only run of mvn test (parent pom). The JVM's
  # own log (coverage, exec/s, any crash) is in $module/target/surefire-reports/<Class>-output.txt
  if JAZZER_FUZZ=1 mvn -B -q -o -pl "$module" surefire:test -Dtest="$test" -Djazzer.hooks=true \
      -Djazzer.max_duration="$duration" -Dsurefire.failIfNoSpecifiedTests=false; then
    grep -h '^Done [0-9]* runs' "$module/target/surefire-reports/${test%%#*}-output.txt" || true
  else
    failed+=("$t")
    echo "!! $t found a crash: see $module/target/surefire-reports/ and the new crash-* file under" \
         "$module/src/test/resources/" >&2
  fi
done

if ((${#failed[@]})); then
  echo "targets with findings: ${failed[*]}" >&2
  exit 1
fi
echo "no findings"
