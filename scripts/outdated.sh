#!/usr/bin/env bash
# Lists which pinned versions have newer releases: the version properties of the parent pom (every
# dependency is pinned through one) and the plugins of its pluginManagement, as the
# versions-maven-plugin (pinned there too) finds them in the repositories Maven reaches.
# Changes nothing: read the list, bump by hand, build and test.
#
#   scripts/outdated.sh          newer releases only (no alpha, beta, milestone, RC)
#   scripts/outdated.sh --all    pre-releases too
set -euo pipefail
cd "$(dirname "$0")/.."

ignore=(-Dmaven.version.ignore='(?i).*[.-](alpha|beta|m|rc|cr|ea|preview)[.-]?[0-9]*')
[ "${1:-}" = "--all" ] && ignore=()

out=$(mvn -B -ntp -N "${ignore[@]}" \
  org.codehaus.mojo:versions-maven-plugin:display-property-updates \
  org.codehaus.mojo:versions-maven-plugin:display-plugin-updates 2>&1) || { echo "$out"; exit 1; }

maven=$(mvn -B -v | sed 's/\x1b\[[0-9;]*m//g' | sed -n 's/^Apache Maven \([0-9.]*\).*/\1/p')
older_or_same() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" = "$2" ]; }

# Properties: the lines with an arrow. Plugins: the plugin prints one section per Maven version
# ("Require Maven x to use the following plugin updates"), oldest first, each plugin with the
# newest release that runs on that Maven; a plugin's line in the last section this Maven can run
# is its answer (an arrow there is an update, no arrow means it is the newest).
echo "$out" | sed 's/^\[INFO\] *//' | while IFS= read -r line; do
  case "$line" in
    *display-property-updates*) mode=property ;;
    *display-plugin-updates*) mode=plugin ;;
    "Require Maven "*)
      need=${line#Require Maven }; need=${need%% *}
      if older_or_same "$need" "$maven"; then mode=plugin; else mode=""; fi ;;
    *"..."*)
      [ -n "${mode:-}" ] || continue
      name=${line%% *}
      if [ "$mode" = property ]; then echo "property $line"; else echo "plugin $name $line"; fi ;;
  esac
done | awk '
  $1 == "property" && /->/ { sub(/^property /, ""); print "property: " $0; n++ }
  $1 == "plugin" { name = $2; sub(/^plugin [^ ]+ /, ""); last[name] = $0; if (!(name in seen)) { seen[name] = 1; order[++k] = name } }
  END {
    for (i = 1; i <= k; i++) if (last[order[i]] ~ /->/) { print "plugin:   " last[order[i]]; n++ }
    if (n == 0) print "every pinned version is the newest release"
  }'
