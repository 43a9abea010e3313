#!/usr/bin/env bash
# Builds chaos-ozone:<version> from Apache Ozone's released jars on Maven Central.
#
#   images/ozone/build.sh                    # chaos-ozone:$OZONE_VERSION (default 2.2.0)
#   images/ozone/build.sh chaos-ozone:2.2.1  # the version named by the tag
#   CHAOS_OZONE_FORCE=1 images/ozone/build.sh   # rebuild even if the tag exists
#
# 1. mvn resolves the runtime jars of the components (pom.xml beside this script, versions pinned
#    by importing ozone-main's dependencyManagement) into the Maven cache ~/.cache/chaos/m2, and
#    copies them into a staging folder. A parent pom Central does not serve (2.2.0 lacks
#    hdds-hadoop-dependency-client, 2.2.1 lacks ozone) gets a stand-in whose parent is ozone-main.
# 2. Each component jar carries <artifact>.classpath, the exact classpath of Ozone's own tarball.
#    Every jar it names must be staged; a jar Maven resolved at another version (the stand-in
#    parent has no dependencyManagement of its own) is fetched at the named version.
# 3. docker build on chaos-base:bookworm with Debian's Java 17.
# A second build of a version whose jars are cached takes seconds; an existing tag is kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tag=${1:-${CHAOS_IMAGE_TAG:-chaos-ozone:${OZONE_VERSION:-2.2.0}}}
log() { printf '[ozone] %s\n' "$*" >&2; }
die() { printf '[ozone] ERROR: %s\n' "$*" >&2; exit 1; }

case "$tag" in
  chaos-ozone:*) version=${tag#chaos-ozone:} ;;
  *) die "this script builds chaos-ozone:<version>, not $tag; for $tag: docker pull $tag where a registry answers, then docker save / docker load -i here" ;;
esac
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.-]+)?$ ]] || die "'$version' is not an Ozone version (like 2.2.0)"

cache=${HOME:-/root}/.cache/chaos
mkdir -p "$cache"
exec 9>"$cache/ozone.build.lock"
flock 9
if [ "${CHAOS_OZONE_FORCE:-0}" != 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  log "$tag already exists (CHAOS_OZONE_FORCE=1 rebuilds it)"
  exit 0
fi
command -v mvn >/dev/null || die "mvn is not installed (Maven resolves Ozone's jars)"
command -v unzip >/dev/null || die "unzip is not installed (scripts/setup installs it)"
started=$(date +%s)

repo=$cache/m2
stage=$cache/ozone-$version
rm -rf "$stage"; mkdir -p "$stage/lib" "$stage/classpath"
# The jars are in the Maven cache; the staged copies go on every way out (mvn.log stays).
trap 'rm -rf "$stage/lib" "$stage/used" "$stage/context"' EXIT
mvn_args=(-B -Dmaven.repo.local="$repo" -f "$here/pom.xml" -Dozone.version="$version")

# A parent pom Central does not serve: a stand-in that inherits ozone-main's properties and
# dependencyManagement (the real one adds only its own dependencyManagement and exclusions).
stand_in() {
  local artifact=$1 dir=$repo/org/apache/ozone/$1/$version
  mkdir -p "$dir"; rm -f "$dir"/*.lastUpdated
  cat >"$dir/$artifact-$version.pom" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by chaos images/ozone/build.sh: Maven Central serves no $artifact $version pom. -->
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <parent><groupId>org.apache.ozone</groupId><artifactId>ozone-main</artifactId><version>$version</version><relativePath/></parent>
  <groupId>org.apache.ozone</groupId><artifactId>$artifact</artifactId><version>$version</version><packaging>pom</packaging>
</project>
POM
}

# mvn's download lines, summarised every 20 artifacts so a slow network shows progress.
progress() {
  awk '/Downloaded from/ { n++; s=$0; sub(/.*\(/, "", s); split(s, a, " "); v=a[1]; u=a[2];
                            mb += (u ~ /^MB/ ? v : u ~ /^kB/ ? v/1024 : u ~ /^GB/ ? v*1024 : v/1048576);
                            if (n % 20 == 0) printf "[ozone] mvn: %d files downloaded (%.0f MB)\n", n, mb > "/dev/stderr" }
       { print > "/dev/stdout" }
       END { if (n) printf "[ozone] mvn: %d files downloaded (%.0f MB)\n", n, mb > "/dev/stderr" }'
}

log "resolving Apache Ozone $version with mvn (Maven cache $repo)"
ok=0
for _ in $(seq 1 8); do
  if mvn "${mvn_args[@]}" dependency:copy-dependencies -DincludeScope=runtime \
       -DoutputDirectory="$stage/lib" 2>&1 | progress >"$stage/mvn.log"; then ok=1; break; fi
  # No ozone-main (or no ozone-manager) of that version: Central has no such release. mvn says
  # "Could not find artifact X" the first time and "X was not found ... during a previous
  # attempt" when it remembers the miss.
  if grep -qE "(Could not find artifact org\.apache\.ozone:ozone-(main:pom|manager:jar):$version)|(org\.apache\.ozone:ozone-(main:pom|manager:jar):$version was not found)" "$stage/mvn.log"; then
    # No release: nothing of it stays behind (the stage folder, mvn's record of the miss).
    rm -rf "$stage" "$repo/org/apache/ozone/ozone-main/$version" "$repo/org/apache/ozone/ozone-manager/$version"
    # 2.0.0 is such a release: its jars are served, its root pom (which pins every dependency's
    # version) answers 404, so nothing can resolve its classpath (checked 2026-12-03).
    central=https://repo.maven.apache.org/maven2/org/apache/ozone
    if [ "$(curl -s -m 20 -o /dev/null -w '%{http_code}' "$central/ozone-manager/$version/ozone-manager-$version.jar")" = 200 ] \
       && [ "$(curl -s -m 20 -o /dev/null -w '%{http_code}' "$central/ozone-main/$version/ozone-main-$version.pom")" != 200 ]; then
      die "Maven Central serves Apache Ozone $version's jars but not its root pom (ozone-main-$version.pom), which pins the versions of its dependencies, so its classpath cannot be resolved here; build from a distribution instead: chaos images build ozone --dist ozone-$version.tar.gz (Apache's download page)"
    fi
    die "Maven Central has no Apache Ozone $version (org.apache.ozone:ozone-manager:$version); versions with an Ozone Manager there: $(curl -s -m 20 https://repo.maven.apache.org/maven2/org/apache/ozone/ozone-manager/maven-metadata.xml | grep -o '<version>[^<]*' | sed 's/<version>//' | tr '\n' ' ')"
  fi
  missing=$(grep -oE "org\.apache\.ozone:[A-Za-z0-9.-]+:pom:$version" "$stage/mvn.log" | grep -v ":ozone-main:" | head -n 1 || true)
  if [ -z "$missing" ]; then
    if grep -qE "Could not transfer|Connection refused|Unknown host|timed out|Network is unreachable" "$stage/mvn.log"; then
      die "Maven Central does not answer ($(grep -m1 -oE '(Could not transfer|Unknown host|Connection refused|Network is unreachable|timed out)[^]]*' "$stage/mvn.log")); with an Ozone image from elsewhere: docker load -i ozone.tar, and set OZONE_IMAGE to its tag"
    fi
    tail -n 20 "$stage/mvn.log" >&2
    die "mvn could not resolve Ozone $version (log: $stage/mvn.log)"
  fi
  artifact=$(echo "$missing" | cut -d: -f2)
  log "Maven Central serves no pom for org.apache.ozone:$artifact:$version; using a stand-in whose parent is ozone-main"
  stand_in "$artifact"
done
[ "$ok" = 1 ] || die "mvn could not resolve Ozone $version after 8 tries (log: $stage/mvn.log)"

# Each component's classpath, in the tarball's order, as paths in the image.
components=(ozone-manager hdds-server-scm ozone-datanode ozone-s3gateway ozone-cli-shell ozone-cli-admin ozone-tools)
for c in "${components[@]}"; do
  jar=$stage/lib/$c-$version.jar
  [ -f "$jar" ] || die "$c-$version.jar was not resolved"
  unzip -p "$jar" "$c.classpath" >"$stage/$c.raw" 2>/dev/null || die "$c-$version.jar holds no $c.classpath"
  { { cat "$stage/$c.raw"; echo; } | sed -e 's/^classpath=//' | tr ':' '\n' | sed -e 's|^\$HDDS_LIB_JARS_DIR/||' -e '/^$/d'; echo "$c-$version.jar"; } \
    | sed 's|^|/opt/ozone/lib/|' >"$stage/classpath/$c.classpath"
done

# Jars a classpath names that Maven resolved at another version: fetch the named one.
fetched=0
while read -r name; do
  [ -f "$stage/lib/$name" ] && continue
  base=$(echo "$name" | sed -E 's/-[0-9][^-]*(-[A-Za-z0-9]+)*\.jar$//')
  wanted=${name#"$base"-}; wanted=${wanted%.jar}
  other=$(find "$repo" -name "$base-*.jar" -path "*/$base/*" | head -n 1)
  [ -n "$other" ] || die "$name is on a component's classpath but Maven resolved no $base"
  group=$(dirname "$(dirname "$(dirname "$other")")"); group=${group#"$repo"/}; group=${group//\//.}
  log "$name: Maven resolved $(basename "$other"); fetching $group:$base:$wanted as the tarball has it"
  mvn "${mvn_args[@]}" -q dependency:copy -Dartifact="$group:$base:$wanted" -DoutputDirectory="$stage/lib" >>"$stage/mvn.log" 2>&1 \
    || die "could not fetch $group:$base:$wanted (log: $stage/mvn.log)"
  fetched=$((fetched + 1))
done < <(cat "$stage"/classpath/*.classpath | sed 's|^/opt/ozone/lib/||' | sort -u)

# Only the jars some classpath names go into the image.
mkdir -p "$stage/used"
cat "$stage"/classpath/*.classpath | sed 's|^/opt/ozone/lib/||' | sort -u | while read -r name; do
  ln "$stage/lib/$name" "$stage/used/$name" 2>/dev/null || cp "$stage/lib/$name" "$stage/used/$name"
done
jars=$(ls "$stage/used" | wc -l)
log "$jars jars ($(du -sm "$stage/used" | cut -f1) MB) on the classpaths of ${#components[@]} components; $fetched fetched at the tarball's version"

# Build context: this folder's files plus the staged jars and classpaths.
ctx=$stage/context
mkdir -p "$ctx"
cp -r "$here/Dockerfile" "$here/ozone" "$here/entrypoint.sh" "$here/envtoconf" "$here/cds-train" "$here/conf" "$ctx/"
mv "$stage/used" "$ctx/lib"; cp -r "$stage/classpath" "$ctx/classpath"
"$here/byteman.sh" "$ctx"
"$here/../base/build.sh"
log "docker build -t $tag"
docker build -q --build-arg OZONE_VERSION="$version" -t "$tag" "$ctx" >/dev/null
log "built $tag ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1048576}')) in $(( $(date +%s) - started )) s"
