#!/usr/bin/env bash
# Compiles patches against Apache Ozone's released sources into class files that overlay the
# release jars: the "release plus patches" build of chaos-ozone images.
#
#   images/ozone/patch.sh VERSION OUTDIR PATCH...
#   images/ozone/patch.sh 2.2.0 /tmp/out fixes/HDDS-16767.patch
#
# PATCH: unified diffs against Ozone's source tree, a/ and b/ prefixes (as `git diff` writes
# them; lines before the first `diff --git`/`---` are a comment). They are applied in order, so a
# later patch may build on an earlier one.
#
# For each module a patch touches, OUTDIR gets
#   OUTDIR/<artifactId>/                 the compiled classes (inner classes Foo$1.class too) and
#                                        changed resources, laid out as in the jar;
#   OUTDIR/<artifactId>-VERSION.jar      the release jar with those files overlaid (`jar uf`);
#   OUTDIR/<artifactId>.files            the changed source files, one a line;
#   OUTDIR/<artifactId>.classpath        the jars javac compiled against, one a line.
#
# Steps: the module of a path is found by the rule in module_of (below); its -sources.jar and jar
# at VERSION come from Maven Central into the Maven cache ~/.cache/chaos/m2 (as build.sh's); the
# sources are unpacked as Ozone's tree lays them out (<dir>/src/main/java, .../resources) and the
# hunks applied with `patch -p1 -F 0` (offsets allowed, no fuzz: a hunk whose context differs
# fails, as with `git apply`); the changed .java files are compiled with javac --release 17
# against the module's runtime classpath (the jar's own <artifactId>.classpath, the exact
# classpath of Ozone's tarball, when it carries one; else mvn dependency:build-classpath).
# Changed classes of the other patched modules are visible through -sourcepath, so a fix that
# spans modules compiles in any order. Annotation processors are off (-proc:none): what they
# generate (config defaults, service files) is already in the release jar.
#
# Overlay image: chaos-ozone:VERSION holds the release jars, byte for byte, as
# /opt/ozone/lib/<artifactId>-VERSION.jar (the classpath files in /opt/ozone/classpath name them),
# so a patched image is a build context with OUTDIR's jars and the Dockerfile
#   FROM chaos-ozone:2.2.0
#   COPY ozone-manager-2.2.0.jar /opt/ozone/lib/ozone-manager-2.2.0.jar
#   RUN ozone version >/dev/null
# (one COPY per patched jar); OZONE_IMAGE=<its tag> makes the compose file use it.
#
# Errors are one line each ("[patch] ERROR: ...") and exit 1.
# Env: PATCH_JAVA_RELEASE (default 17; the release jars are Java 8 bytecode, the image runs 17).
set -euo pipefail
log() { printf '[patch] %s\n' "$*" >&2; }
die() { printf '[patch] ERROR: %s\n' "$*" >&2; exit 1; }

[ $# -ge 3 ] || die "usage: patch.sh VERSION OUTDIR PATCH..."
version=$1 outdir=$2; shift 2
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.-]+)?$ ]] || die "'$version' is not an Ozone version (like 2.2.0)"
for p in "$@"; do [ -f "$p" ] || die "$p: no such patch file"; done
for t in mvn javac jar unzip patch; do command -v "$t" >/dev/null || die "$t is not installed"; done
release=${PATCH_JAVA_RELEASE:-17}

repo=${HOME:-/root}/.cache/chaos/m2
mkdir -p "$repo" "$outdir"
outdir=$(cd "$outdir" && pwd)
patches=(); for p in "$@"; do patches+=("$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"); done
work=$(mktemp -d "${TMPDIR:-/tmp}/ozone-patch.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM HUP
mvn_q=(-B -q -Dmaven.repo.local="$repo")

# Module directory -> Maven artifactId (groupId org.apache.ozone). Rule: hadoop-hdds/<dir> is
# hdds-<dir> and hadoop-ozone/<dir> is ozone-<dir>, except the names below, which are the
# <artifactId> of each module's pom.xml in apache/ozone where it differs from that rule (module
# lists: the <modules> of the hdds and ozone poms 2.2.0). Test-only modules (integration-test*,
# mini-cluster, fault-injection-test, test-utils) and the shaded ozonefs jars are left out: no
# release jar runs their classes.
module_of() { # path in Ozone's tree -> "dir artifactId", or nothing
  local top=${1%%/*} rest=${1#*/} dir
  dir=${rest%%/*}
  [ "$rest" != "$1" ] && [ "$dir" != "$rest" ] || return 0
  case "$top/$dir" in
    hadoop-hdds/annotations) echo "$top/$dir hdds-annotation-processing" ;;
    hadoop-hdds/framework) echo "$top/$dir hdds-server-framework" ;;
    hadoop-hdds/rocksdb-checkpoint-differ) echo "$top/$dir rocksdb-checkpoint-differ" ;;
    hadoop-ozone/ozone-manager) echo "$top/$dir ozone-manager" ;;
    hadoop-ozone/ozonefs) echo "$top/$dir ozone-filesystem" ;;
    hadoop-ozone/ozonefs-common) echo "$top/$dir ozone-filesystem-common" ;;
    hadoop-ozone/recon-codegen) echo "$top/$dir ozone-reconcodegen" ;;
    hadoop-hdds/test-utils|hadoop-hdds/docs|hadoop-ozone/integration-test*|hadoop-ozone/mini-cluster \
      |hadoop-ozone/fault-injection-test|hadoop-ozone/ozonefs-hadoop*|hadoop-ozone/ozonefs-shaded|hadoop-ozone/dist) ;;
    hadoop-hdds/cli-common|hadoop-hdds/client|hadoop-hdds/common|hadoop-hdds/config \
      |hadoop-hdds/container-service|hadoop-hdds/crypto-api|hadoop-hdds/crypto-default|hadoop-hdds/erasurecode \
      |hadoop-hdds/interface-admin|hadoop-hdds/interface-client|hadoop-hdds/interface-server \
      |hadoop-hdds/managed-rocksdb|hadoop-hdds/rocks-native|hadoop-hdds/server-scm)
      echo "$top/$dir hdds-$dir" ;;
    hadoop-ozone/cli-admin|hadoop-ozone/cli-debug|hadoop-ozone/cli-interactive|hadoop-ozone/cli-repair \
      |hadoop-ozone/cli-shell|hadoop-ozone/client|hadoop-ozone/common|hadoop-ozone/csi|hadoop-ozone/datanode \
      |hadoop-ozone/freon|hadoop-ozone/httpfsgateway|hadoop-ozone/iceberg|hadoop-ozone/insight \
      |hadoop-ozone/interface-client|hadoop-ozone/interface-storage|hadoop-ozone/multitenancy-ranger \
      |hadoop-ozone/recon|hadoop-ozone/s3-secret-store|hadoop-ozone/s3gateway|hadoop-ozone/tools|hadoop-ozone/vapor)
      echo "$top/$dir ozone-$dir" ;;
  esac
}

# The files a patch changes: "OLD NEW" per file, -p1 already stripped, /dev/null for none.
files_of() {
  awk '/^--- / { old = $2; next }
       /^\+\+\+ / && old != "" { new = $2; o = old; n = new; old = "";
         if (o != "/dev/null") sub(/^[^\/]*\//, "", o); if (n != "/dev/null") sub(/^[^\/]*\//, "", n);
         print o, n }' "$1"
}

# 1. Which modules, which files.
declare -A dir_of=()     # artifactId -> module dir
declare -A changed=()    # artifactId -> newline-separated paths inside the module dir (src/main/...)
for p in "${patches[@]}"; do
  n=0
  while read -r old new; do
    n=$((n + 1))
    path=$new; [ "$path" = /dev/null ] && path=$old
    [ "$new" = /dev/null ] && die "$(basename "$p"): $old: deletes a file, which an overlay of the release jar cannot do"
    [ "$old" != /dev/null ] && [ "$old" != "$new" ] && die "$(basename "$p"): $old -> $new: renames a file, which this script does not support"
    read -r mdir artifact < <(module_of "$path"; echo) || true
    case "$path" in
      ratis-*/*) [ -n "${artifact:-}" ] || die "$(basename "$p"): $path is a file of Apache Ratis, whose modules --patch does not know: it patches Ozone's own modules (a Ratis version is swapped with --swap ratis=VERSION)" ;;
    esac
    [ -n "${artifact:-}" ] || die "$(basename "$p"): $path is outside every module Ozone publishes on Maven Central"
    inner=${path#"$mdir"/}
    case "$inner" in
      src/main/java/*.java|src/main/resources/*) ;;
      src/main/proto/*) die "$(basename "$p"): $path: a .proto change needs protoc and regenerated classes, which this script does not do" ;;
      *) die "$(basename "$p"): $path is not under $mdir/src/main/java (.java) or $mdir/src/main/resources, the parts of $artifact-$version.jar" ;;
    esac
    dir_of[$artifact]=$mdir
    changed[$artifact]+="$inner"$'\n'
  done < <(files_of "$p")
  [ "$n" -gt 0 ] || die "$(basename "$p"): no file changes found (not a unified diff?)"
done

# 2. Release sources and jars from Maven Central, unpacked as Ozone's tree.
tree=$work/tree
for artifact in "${!dir_of[@]}"; do
  mdir=${dir_of[$artifact]}
  for classifier in sources ""; do
    mvn "${mvn_q[@]}" dependency:get -Dtransitive=false \
        -Dartifact="org.apache.ozone:$artifact:$version:jar${classifier:+:$classifier}" >"$work/mvn.log" 2>&1 \
      || die "Maven Central serves no org.apache.ozone:$artifact:$version${classifier:+:$classifier} jar ($(grep -m1 -oE '(Could not (find|transfer) artifact|Unknown host|Connection refused)[^]]*' "$work/mvn.log" || tail -n1 "$work/mvn.log"))"
  done
  src=$repo/org/apache/ozone/$artifact/$version/$artifact-$version-sources.jar
  mkdir -p "$tree/$mdir/src/main/java" "$tree/$mdir/src/main/resources"
  unzip -q -o "$src" '*.java' -d "$tree/$mdir/src/main/java" 2>/dev/null || true
  unzip -q -o "$src" -x '*.java' 'META-INF/MANIFEST.MF' -d "$tree/$mdir/src/main/resources" 2>/dev/null || true
done

# 3. Apply the hunks.
for p in "${patches[@]}"; do
  name=$(basename "$p")
  while read -r old new; do
    if [ "$old" != /dev/null ] && [ ! -f "$tree/$old" ]; then
      die "$name: $old is not in org.apache.ozone:$(module_of "$old" | cut -d' ' -f2):$version's sources"
    fi
  done < <(files_of "$p")
  if ! (cd "$tree" && patch -p1 -N -F 0 -r - --no-backup-if-mismatch -i "$p") >"$work/patch.log" 2>&1; then
    # "patching file X" precedes its "Hunk #N FAILED at L." lines.
    msg=$(awk 'function flush() { if (h != "") { printf "%s%s: hunk %s failed", sep, f, h; sep = "; " } h = "" }
               /^patching file / { flush(); f = $3 }
               /^Hunk #[0-9]+ FAILED at/ { l = $5; sub(/\.$/, "", l); h = h (h == "" ? "" : ", ") $2 " (at line " l ")" }
               /Reversed \(or previously applied\) patch detected/ { printf "%s%s: already applied (or reversed)", sep, f; sep = "; " }
               /malformed patch/ { printf "%s%s", sep, $0; sep = "; " }
               END { flush() }' "$work/patch.log")
    [ -n "$msg" ] || msg=$(grep -v '^patching file' "$work/patch.log" | head -n1)
    die "$name: hunks do not apply to Ozone $version: $msg"
  fi
done

# 4. Classpath per module: the exact runtime classpath the jar names, else Maven's.
classpath_of() { # artifactId -> colon-separated jars
  local artifact=$1 jar=$repo/org/apache/ozone/$1/$version/$1-$version.jar pom=$work/cp-$1/pom.xml
  mkdir -p "$work/cp-$artifact"
  cat >"$pom" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>chaos</groupId><artifactId>patch-classpath</artifactId><version>1</version><packaging>pom</packaging>
  <dependencyManagement><dependencies><dependency><groupId>org.apache.ozone</groupId><artifactId>ozone-main</artifactId>
    <version>$version</version><type>pom</type><scope>import</scope></dependency></dependencies></dependencyManagement>
  <dependencies><dependency><groupId>org.apache.ozone</groupId><artifactId>$artifact</artifactId><version>$version</version></dependency></dependencies>
</project>
POM
  local ok=0 missing
  for _ in 1 2 3 4 5 6; do
    if mvn "${mvn_q[@]}" -f "$pom" dependency:build-classpath -DincludeScope=runtime \
         -Dmdep.outputFile="$work/cp-$artifact/mvn.cp" >"$work/cp-$artifact/mvn.log" 2>&1; then ok=1; break; fi
    # A parent pom Central does not serve (2.2.0: hdds-hadoop-dependency-client): the stand-in
    # images/ozone/build.sh also writes, whose parent is ozone-main.
    missing=$(grep -oE "org\.apache\.ozone:[A-Za-z0-9.-]+:pom:$version" "$work/cp-$artifact/mvn.log" | grep -v ":ozone-main:" | head -n1 | cut -d: -f2 || true)
    [ -n "$missing" ] || break
    mkdir -p "$repo/org/apache/ozone/$missing/$version"; rm -f "$repo/org/apache/ozone/$missing/$version"/*.lastUpdated
    printf '%s\n' '<?xml version="1.0" encoding="UTF-8"?>' \
      "<!-- Written by chaos images/ozone/patch.sh: Maven Central serves no $missing $version pom. -->" \
      '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>' \
      "  <parent><groupId>org.apache.ozone</groupId><artifactId>ozone-main</artifactId><version>$version</version><relativePath/></parent>" \
      "  <groupId>org.apache.ozone</groupId><artifactId>$missing</artifactId><version>$version</version><packaging>pom</packaging>" \
      '</project>' >"$repo/org/apache/ozone/$missing/$version/$missing-$version.pom"
  done
  [ "$ok" = 1 ] || die "mvn could not resolve the classpath of $artifact $version: $(grep -m1 -E '\[ERROR\]' "$work/cp-$artifact/mvn.log" | cut -c1-300)"
  local resolved; resolved=$(cat "$work/cp-$artifact/mvn.cp")
  if unzip -p "$jar" "$artifact.classpath" >"$work/cp-$artifact/raw" 2>/dev/null && [ -s "$work/cp-$artifact/raw" ]; then
    # classpath=$HDDS_LIB_JARS_DIR/a-1.jar:...: each name from what Maven resolved, else from the cache.
    local names out="" name hit
    names=$(sed -e 's/^classpath=//' "$work/cp-$artifact/raw" | tr ':' '\n' | sed -e 's|^\$HDDS_LIB_JARS_DIR/||' -e '/^$/d')
    declare -A by_name=()
    while IFS= read -r hit; do by_name[$(basename "$hit")]=$hit; done < <(tr ':' '\n' <<<"$resolved")
    for name in $names; do
      hit=${by_name[$name]:-}
      [ -n "$hit" ] || hit=$(find "$repo" -name "$name" -type f | head -n1)
      [ -n "$hit" ] || { log "$artifact.classpath names $name, which Maven resolved at another version; using Maven's"; out=""; break; }
      out+="$hit:"
    done
    if [ -n "$out" ]; then echo "${out}$jar"; return; fi
  fi
  echo "$resolved:$jar"
}

# 5. Compile, per module, into OUTDIR/<artifactId>/; overlay onto the release jar.
changed_src=$work/changed-src        # every changed .java, by package path: -sourcepath of all
mkdir -p "$changed_src"
for artifact in "${!dir_of[@]}"; do
  while IFS= read -r inner; do
    case "$inner" in src/main/java/*.java)
      rel=${inner#src/main/java/}; mkdir -p "$changed_src/$(dirname "$rel")"
      cp "$tree/${dir_of[$artifact]}/$inner" "$changed_src/$rel" ;;
    esac
  done <<<"${changed[$artifact]%$'\n'}"
done

for artifact in "${!dir_of[@]}"; do
  mdir=${dir_of[$artifact]} dest=$outdir/$artifact
  rm -rf "$dest"; mkdir -p "$dest"
  sources=(); : >"$outdir/$artifact.files"
  while IFS= read -r inner; do
    echo "$mdir/$inner" >>"$outdir/$artifact.files"
    case "$inner" in
      src/main/java/*.java) sources+=("$tree/$mdir/$inner") ;;
      src/main/resources/*) rel=${inner#src/main/resources/}; mkdir -p "$dest/$(dirname "$rel")"; cp "$tree/$mdir/$inner" "$dest/$rel" ;;
    esac
  done < <(printf '%s' "${changed[$artifact]}" | sort -u)
  if [ ${#sources[@]} -gt 0 ]; then
    log "compiling ${#sources[@]} file(s) of $artifact $version"
    cp=$(classpath_of "$artifact")
    tr ':' '\n' <<<"$cp" >"$outdir/$artifact.classpath"
    if ! javac --release "$release" -nowarn -encoding UTF-8 -proc:none -implicit:none -Xprefer:source \
          -sourcepath "$changed_src" -cp "$cp" -d "$dest" -Xmaxerrs 20 "${sources[@]}" >"$work/javac.log" 2>&1; then
      # javac: "path:line: error: message", the source line, a caret, "symbol:"/"location:" lines.
      first=$(awk -v tree="$tree/" '
          /\.java:[0-9]+: error: / { if (n++) exit; l = $0; sub(tree, "", l); next }
          n == 1 && /^ *(symbol|location|required|found|reason): / { s = $0; gsub(/^ +/, "", s); gsub(/ +/, " ", s); l = l "; " s }
          END { print l }' "$work/javac.log")
      count=$(grep -cE '\.java:[0-9]+: error: ' "$work/javac.log" || true)
      [ -n "$first" ] || first=$(head -n1 "$work/javac.log")
      die "javac ($artifact $version, $count error(s)): $first"
    fi
  fi
  n=$(find "$dest" -type f | wc -l)
  [ "$n" -gt 0 ] || die "$artifact: nothing to overlay"
  cp "$repo/org/apache/ozone/$artifact/$version/$artifact-$version.jar" "$outdir/$artifact-$version.jar"
  chmod u+w "$outdir/$artifact-$version.jar"
  (cd "$dest" && jar uf "$outdir/$artifact-$version.jar" .)
  log "$artifact: $n file(s) in $dest, overlaid onto $outdir/$artifact-$version.jar"
done
