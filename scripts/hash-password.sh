#!/usr/bin/env bash
# Prints the bcrypt hash of a password, for security.principals[].passwordHash in the server config.
# Usage: scripts/hash-password.sh            (asks for the password without echoing it)
#        printf '%s\n' "$PASSWORD" | scripts/hash-password.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jar=server/target/ringcast-server.jar
[ -f "$jar" ] || mvn -B -q -DskipTests -pl server -am package
if [ -t 0 ]; then
  read -r -s -p "password: " password; echo >&2
  printf '%s\n' "$password" | java -jar "$jar" hash-password
else
  java -jar "$jar" hash-password
fi
