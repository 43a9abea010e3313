#!/usr/bin/env bash
# Build chaosfs as one statically linked binary (glibc, crt-static) for use inside containers,
# and print its path on stdout. No libfuse is needed: fuser mounts through /dev/fuse directly.
#
#   chaosfs/build-static.sh            # release build; prints e.g. .../x86_64-unknown-linux-gnu/release/chaosfs
#   CARGO_TARGET_DIR=... chaosfs/build-static.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target-chaosfs}"
RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release -p chaosfs --target x86_64-unknown-linux-gnu >&2
bin="$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/chaosfs"
# Static (or static-pie): no program interpreter and no shared-library dependencies.
if command -v readelf >/dev/null 2>&1; then
    if readelf -lW "$bin" | grep -q 'INTERP' || readelf -dW "$bin" | grep -q '(NEEDED)'; then
        echo "build-static.sh: $bin is not statically linked" >&2
        exit 1
    fi
fi
echo "$bin"
