#!/usr/bin/env bash
# Stages the Byteman agent for the chaos-ozone image into DIR/byteman: Byteman's agent jar
# (org.jboss.byteman:byteman, from Maven Central through mvn) and chaos's rule helper
# (byteman/ChaosHelper.java, compiled here against it). The image's launcher loads the agent into
# every Ozone daemon (images/ozone/ozone); the harness loads and unloads rules over its port.
#   images/ozone/byteman.sh DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: byteman.sh DIR}/byteman
version=${BYTEMAN_VERSION:-4.0.24}
repo=${HOME:-/root}/.cache/chaos/m2
command -v javac >/dev/null || { echo "[ozone] ERROR: javac is not installed (Java 17's JDK compiles chaos's Byteman helper)" >&2; exit 1; }
mkdir -p "$out"
if [ ! -f "$repo/org/jboss/byteman/byteman/$version/byteman-$version.jar" ]; then
  mvn -B -q -Dmaven.repo.local="$repo" dependency:get -Dtransitive=false \
    -Dartifact="org.jboss.byteman:byteman:$version" >&2 \
    || { echo "[ozone] ERROR: Maven Central did not serve org.jboss.byteman:byteman:$version" >&2; exit 1; }
fi
cp "$repo/org/jboss/byteman/byteman/$version/byteman-$version.jar" "$out/byteman.jar"
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
javac -nowarn --release 17 -cp "$out/byteman.jar" -d "$classes" "$here/byteman/ChaosHelper.java"
jar cf "$out/chaos-byteman.jar" -C "$classes" .
echo "[ozone] Byteman $version and chaos's rule helper staged in $out" >&2
