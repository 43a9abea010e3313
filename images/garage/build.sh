#!/usr/bin/env bash
# Builds chaos-garage:latest: compiles Garage with the machine's own toolchain (once; the binary
# is cached) and copies it into an image FROM chaos-base:bookworm with images/garage/garage.toml.
#
#   images/garage/build.sh            # 15-30 min the first time on 2 cores, seconds after
#   CHAOS_GARAGE_ROOT=DIR             # where `cargo install --root` puts it
#                                     # (default: ~/.cache/chaos/garage-$VERSION)
#   CHAOS_GARAGE_FORCE=1              # rebuild the image even if it exists
#
# Features: bundled-libs and lmdb only (no metrics, sqlite, k2v: less to compile; the testbed
# uses none of them), no debug info, no LTO. If that subset ever fails to compile, the script
# falls back to Garage's default features.
set -euo pipefail
VERSION=2.5.0
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="${CHAOS_GARAGE_ROOT:-${HOME:-/root}/.cache/chaos/garage-$VERSION}"
TAG=chaos-garage:latest
# One build at a time (CI builds in the background while tests that need the image may ask for
# it too): a second caller waits here, then finds the image made.
mkdir -p "${HOME:-/root}/.cache/chaos"
exec 9>"${HOME:-/root}/.cache/chaos/garage.build.lock"
flock 9

die() { echo "images/garage/build.sh: $*" >&2; exit 1; }

if [[ -z "${CHAOS_GARAGE_FORCE:-}" ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "$TAG exists (CHAOS_GARAGE_FORCE=1 rebuilds)"
  exit 0
fi

if [[ ! -x "$ROOT/bin/garage" ]]; then
  command -v cargo >/dev/null || die "cargo is needed to compile garage (install Rust)"
  echo "compiling garage $VERSION into $ROOT (about 15 minutes on 2 cores)"
  start=$(date +%s)
  install() {
    # A private target dir: the install must not fight with the workspace builds over theirs.
    CARGO_TARGET_DIR="$ROOT/target" CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_LTO=false \
      cargo install garage --version "$VERSION" --locked --root "$ROOT" "$@"
  }
  if ! install --no-default-features --features bundled-libs,lmdb; then
    echo "the feature subset bundled-libs,lmdb failed; trying Garage's default features" >&2
    install || die "cargo install garage $VERSION failed (crates.io reachable? rustc recent enough?)"
  fi
  rm -rf "$ROOT/target"
  echo "garage compiled in $(( $(date +%s) - start )) s"
fi

# The base image after the compile: a CI job building it in parallel has had time to finish.
docker image inspect chaos-base:bookworm >/dev/null 2>&1 \
  || "$HERE/../base/build.sh" \
  || die "the base image chaos-base:bookworm is missing and could not be built"

mkdir -p "$HERE/bin"
cp "$ROOT/bin/garage" "$HERE/bin/garage"
start=$(date +%s)
docker build -q -t "$TAG" "$HERE" >/dev/null || die "docker build of $TAG failed"
echo "$TAG built in $(( $(date +%s) - start )) s"
