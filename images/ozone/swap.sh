#!/usr/bin/env bash
# Resolves another version of a dependency of Ozone's (Apache Ratis) from Maven Central: the jars
# a "swapped" chaos-ozone image puts in place of the release's (runner/src/cluster/ozone_swap.rs
# decides which jars go and which come; this script only asks Maven).
#
#   images/ozone/swap.sh GROUP VERSION OUTDIR ARTIFACT...
#   images/ozone/swap.sh org.apache.ratis 3.3.0 /tmp/out ratis-server ratis-common ratis-grpc
#
# mvn resolves GROUP:ARTIFACT:VERSION for every ARTIFACT with its own runtime dependency tree
# (no dependencyManagement of Ozone's: the versions are the ones that release of the dependency
# asks for) into the Maven cache ~/.cache/chaos/m2 (build.sh's), and copies every jar of that tree
# into OUTDIR/jars/ as <groupId>.<artifactId>-<version>.jar.
#
# The first ARTIFACT is the one that says whether the release exists (ratis-server): when Central
# lacks it at VERSION, the script fails with "Maven Central has no ...", the versions Central has,
# and removes Maven's record of the miss. Another ARTIFACT Central lacks at VERSION (Ratis 3.2.2
# was published without ratis-shell, ratis-netty and ratis-metrics-dropwizard3) is left out and
# named in OUTDIR/absent, one a line.
#
# Errors are one line each ("[swap] ERROR: ...") and exit 1.
# Env: CHAOS_SWAP_TITLE, the dependency's name in messages (default: GROUP).
set -euo pipefail
log() { printf '[swap] %s\n' "$*" >&2; }
die() { printf '[swap] ERROR: %s\n' "$*" >&2; exit 1; }

[ $# -ge 4 ] || die "usage: swap.sh GROUP VERSION OUTDIR ARTIFACT..."
group=$1 version=$2 outdir=$3; shift 3
wanted=("$@")
core=$1
title=${CHAOS_SWAP_TITLE:-$group}
[[ $group =~ ^[A-Za-z0-9_.-]+$ ]] || die "'$group' is not a Maven group id"
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.-]+)?$ ]] || die "'$version' is not a version (like 3.3.0)"
command -v mvn >/dev/null || die "mvn is not installed (Maven resolves the jars)"

repo=${HOME:-/root}/.cache/chaos/m2
work=$(mktemp -d "${TMPDIR:-/tmp}/chaos-swap.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$repo" "$outdir/jars"
: >"$outdir/absent"
group_re=${group//./\\.} version_re=${version//./\\.}

# One try per artifact Central may lack, plus the one that succeeds.
for _ in $(seq 0 "${#wanted[@]}"); do
  {
    echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    echo '  <groupId>chaos</groupId><artifactId>swap</artifactId><version>1</version><packaging>pom</packaging>'
    echo '  <dependencies>'
    for a in "${wanted[@]}"; do
      echo "    <dependency><groupId>$group</groupId><artifactId>$a</artifactId><version>$version</version></dependency>"
    done
    echo '  </dependencies>'
    echo '</project>'
  } >"$work/pom.xml"
  rm -f "$outdir"/jars/*
  if mvn -B -Dmaven.repo.local="$repo" -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
       -Dmdep.prependGroupId=true -DoutputDirectory="$outdir/jars" >"$work/mvn.log" 2>&1; then
    log "$title $version: $(ls "$outdir/jars" | wc -l) jars in its tree ($(grep -c 'Downloaded from' "$work/mvn.log" || true) files downloaded)"
    exit 0
  fi
  # "Could not find artifact G:A:jar:V", "The following artifacts could not be resolved: G:A:jar:V, ...",
  # or "G:A:jar:V was not found in ... during a previous attempt" when Maven remembers the miss.
  missing=$(grep -E '^\[ERROR\]' "$work/mvn.log" | grep -oE "$group_re:[A-Za-z0-9_.-]+:(jar|pom):$version_re" | cut -d: -f2 | sort -u || true)
  if [ -z "$missing" ]; then
    if grep -qE "Could not transfer|Connection refused|Unknown host|timed out|Network is unreachable" "$work/mvn.log"; then
      die "Maven Central does not answer ($(grep -m1 -oE '(Could not transfer|Unknown host|Connection refused|Network is unreachable|timed out)[^]]*' "$work/mvn.log"))"
    fi
    die "mvn could not resolve $group $version: $(grep -m1 -E '^\[ERROR\]' "$work/mvn.log" | cut -c9-300)"
  fi
  if grep -qx "$core" <<<"$missing"; then
    # No such release: nothing of it stays in the cache (Maven's records of the misses).
    for dir in "$repo/${group//.//}"/*/"$version"; do
      [ -d "$dir" ] && ! compgen -G "$dir/*.jar" >/dev/null && rm -rf "$dir"
    done
    versions=$(curl -s -m 20 "https://repo.maven.apache.org/maven2/${group//.//}/$core/maven-metadata.xml" \
      | grep -o '<version>[^<]*' | sed 's/<version>//' | tr '\n' ' ' | sed 's/ $//' || true)
    die "Maven Central has no $title $version ($group:$core:$version)${versions:+; versions there: $versions}"
  fi
  keep=()
  for a in "${wanted[@]}"; do
    if grep -qx "$a" <<<"$missing"; then
      log "Maven Central has no $group:$a:$version"
      echo "$a" >>"$outdir/absent"
    else
      keep+=("$a")
    fi
  done
  [ ${#keep[@]} -lt ${#wanted[@]} ] || die "mvn could not resolve $group $version: $(grep -m1 -E '^\[ERROR\]' "$work/mvn.log" | cut -c9-300)"
  wanted=("${keep[@]}")
done
die "mvn could not resolve $group $version after ${#wanted[@]} tries"
