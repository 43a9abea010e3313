#!/usr/bin/env bash
# Lays out an Ozone distribution folder, as `mvn package -Pdist` writes
# hadoop-ozone/dist/target/ozone-<version>/, from the released jars on Maven Central that
# chaos-ozone:<version> holds (images/ozone/build.sh): a stand-in for a developer's own build,
# to test `chaos images build ozone --dist` and `chaos compare --build dist:PATH` here.
#
#   images/ozone/dist-from-central.sh OUTDIR [VERSION]     # OUTDIR/ozone-VERSION/ (default 2.2.0)
#
# OUTDIR/ozone-VERSION/ gets share/ozone/lib/ (the jars of the components' classpaths),
# share/ozone/classpath/<artifact>.classpath (`classpath=$HDDS_LIB_JARS_DIR/a.jar:...`, the
# module jar appended, as dist-layout-stitching writes them), etc/hadoop/ (the image's
# configuration) and libexec/ (its entrypoint and envtoconf). Only the seven components the
# image runs are there, not Recon, HttpFS or the rest of a real distribution.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: dist-from-central.sh OUTDIR [VERSION]" >&2; exit 2; }
out=$1 version=${2:-2.2.0}
here=$(cd "$(dirname "$0")" && pwd)
image=chaos-ozone:$version
docker image inspect "$image" >/dev/null 2>&1 || CHAOS_IMAGE_TAG=$image "$here/build.sh"
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$out/ozone-$version
rm -rf "$root"
mkdir -p "$root/share/ozone/lib" "$root/share/ozone/classpath" "$root/etc/hadoop" "$root/libexec" "$root/bin"
# The jars and the image's classpaths (one /opt/ozone/lib path a line), read out of the image.
docker run --rm --entrypoint bash -v "$root:/dist" "$image" -c '
  cp /opt/ozone/lib/*.jar /dist/share/ozone/lib/
  for f in /opt/ozone/classpath/*.classpath; do
    a=$(basename "$f" .classpath)
    printf "classpath=%s\n" "$(sed "s|^/opt/ozone/lib/|\$HDDS_LIB_JARS_DIR/|" "$f" | paste -sd:)" >"/dist/share/ozone/classpath/$a.classpath"
  done
  chown -R '"$(id -u):$(id -g)"' /dist'
cp "$here"/conf/* "$root/etc/hadoop/"
cp "$here/entrypoint.sh" "$here/envtoconf" "$root/libexec/"
cp "$here/ozone" "$root/bin/ozone"
echo "$root: $(ls "$root/share/ozone/lib" | wc -l) jars, $(ls "$root/share/ozone/classpath" | wc -l) classpaths"
