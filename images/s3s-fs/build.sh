#!/usr/bin/env bash
# Builds chaos-s3s-fs:latest: compiles s3s-fs with the machine's own toolchain (once; the
# binary is cached) and copies it into an image FROM chaos-base:bookworm.
#
#   images/s3s-fs/build.sh            # ~4 min the first time on 2 cores, seconds after
#   CHAOS_S3S_ROOT=DIR                # where `cargo install --root` puts it
#                                     # (default: ~/.cache/chaos/s3s-fs-$VERSION)
#   CHAOS_S3S_FORCE=1                 # rebuild the image even if it exists
#
# s3s-fs is pinned to 0.14.1: 0.15 and later need rustc 1.96.
set -euo pipefail
VERSION=0.14.1
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="${CHAOS_S3S_ROOT:-${HOME:-/root}/.cache/chaos/s3s-fs-$VERSION}"
TAG=chaos-s3s-fs:latest
# One build at a time (CI builds in the background while tests that need the image may ask for
# it too): a second caller waits here, then finds the image made.
mkdir -p "${HOME:-/root}/.cache/chaos"
exec 9>"${HOME:-/root}/.cache/chaos/s3s-fs.build.lock"
flock 9

die() { echo "images/s3s-fs/build.sh: $*" >&2; exit 1; }

if [[ -z "${CHAOS_S3S_FORCE:-}" ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "$TAG exists (CHAOS_S3S_FORCE=1 rebuilds)"
  exit 0
fi
docker image inspect chaos-base:bookworm >/dev/null 2>&1 \
  || "$HERE/../base/build.sh" \
  || die "the base image chaos-base:bookworm is missing and could not be built"

if [[ ! -x "$ROOT/bin/s3s-fs" ]]; then
  command -v cargo >/dev/null || die "cargo is needed to compile s3s-fs (install Rust)"
  echo "compiling s3s-fs $VERSION into $ROOT (a few minutes)"
  start=$(date +%s)
  # A private target dir: the install must not fight with the workspace builds over theirs.
  CARGO_TARGET_DIR="$ROOT/target" cargo install s3s-fs --version "$VERSION" --locked \
    --features binary --root "$ROOT" \
    || die "cargo install s3s-fs $VERSION failed (crates.io reachable? rustc >= 1.92?)"
  rm -rf "$ROOT/target"
  echo "compiled in $(( $(date +%s) - start )) s"
fi

mkdir -p "$HERE/bin"
cp "$ROOT/bin/s3s-fs" "$HERE/bin/s3s-fs"
start=$(date +%s)
docker build -q -t "$TAG" "$HERE" >/dev/null || die "docker build of $TAG failed"
echo "$TAG built in $(( $(date +%s) - start )) s"
