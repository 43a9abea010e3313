#!/usr/bin/env bash
# Build the local base image chaos-base:bookworm without an image registry.
#
#   images/base/build.sh            # idempotent: exits 0 at once if the tag exists
#   CHAOS_BASE_FORCE=1 images/base/build.sh   # rebuild even if it exists
#
# 1. If chaos-base:bookworm exists: done.
# 2. Try `docker pull debian:bookworm-slim` (bounded by a timeout; skipped with
#    CHAOS_BASE_NO_PULL=1) and tag it.
# 3. Else debootstrap a minimal bookworm (installing debootstrap with apt-get if
#    missing) and `docker import` it.
#
# Environment:
#   CHAOS_BASE_TAG         image tag                      (chaos-base:bookworm)
#   CHAOS_DEBIAN_MIRROR    Debian mirror                  (http://deb.debian.org/debian)
#   CHAOS_DEBIAN_SECURITY  Debian security mirror         (http://deb.debian.org/debian-security)
#   CHAOS_PULL_TIMEOUT     seconds allowed for the pull   (20)
#   CHAOS_BASE_NO_PULL=1   do not try to pull
#   CHAOS_BASE_FORCE=1     rebuild even if the tag exists
set -euo pipefail

TAG="${CHAOS_BASE_TAG:-chaos-base:bookworm}"
# One build at a time (CI builds in the background while tests that need the image may ask for
# it too): a second caller waits here, then finds the image made.
mkdir -p "${HOME:-/root}/.cache/chaos"
exec 9>"${HOME:-/root}/.cache/chaos/base.build.lock"
flock 9
MIRROR="${CHAOS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SECURITY="${CHAOS_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}"
PULL_TIMEOUT="${CHAOS_PULL_TIMEOUT:-20}"
SUITE=bookworm

log() { printf '[base] %s\n' "$*" >&2; }
die() { printf '[base] ERROR: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

T0=$(now)

command -v docker >/dev/null 2>&1 || die "the docker client is not installed"
docker info >/dev/null 2>&1 || die "the Docker daemon is not reachable (is it running? are you allowed to use it?)"

if [[ "${CHAOS_BASE_FORCE:-0}" != 1 ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
    log "$TAG already exists; nothing to do (CHAOS_BASE_FORCE=1 rebuilds it)"
    exit 0
fi

# --- 1. a registry, if there is one ------------------------------------------
if [[ "${CHAOS_BASE_NO_PULL:-0}" != 1 ]]; then
    t=$(now)
    log "trying docker pull debian:bookworm-slim (timeout ${PULL_TIMEOUT}s)"
    if timeout --kill-after=5 "$PULL_TIMEOUT" docker pull -q debian:bookworm-slim >/dev/null 2>"${TMPDIR:-/tmp}/chaos-base-pull.err.$$"; then
        rm -f "${TMPDIR:-/tmp}/chaos-base-pull.err.$$"
        # docker tag cannot add a label: derive a one-layer-free image with it.
        printf 'FROM debian:bookworm-slim\nLABEL chaos.image=base\n' \
            | docker build -q -t "$TAG" - >/dev/null 2>&1 \
            || docker tag debian:bookworm-slim "$TAG" \
            || die "pulled debian:bookworm-slim but could not tag it $TAG"
        log "pulled and tagged $TAG in $(since "$t") (total $(since "$T0"))"
        exit 0
    fi
    log "pull failed after $(since "$t"): $(tr '\n' ' ' <"${TMPDIR:-/tmp}/chaos-base-pull.err.$$" | cut -c1-200)"
    rm -f "${TMPDIR:-/tmp}/chaos-base-pull.err.$$"
fi

# --- 2. debootstrap ------------------------------------------------------------
[[ $(id -u) == 0 ]] || die "debootstrap needs root (run this script with sudo), or make $TAG available another way"

if ! command -v debootstrap >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || die "debootstrap is missing and there is no apt-get to install it; install debootstrap, or load a debian:bookworm-slim image and tag it $TAG"
    t=$(now)
    log "installing debootstrap with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends debootstrap debian-archive-keyring >/dev/null \
        || die "apt-get install debootstrap failed"
    log "installed debootstrap in $(since "$t")"
fi

ROOTFS=$(mktemp -d "${TMPDIR:-/var/tmp}/chaos-base.XXXXXX")
cleanup() {
    # debootstrap may leave /proc, /sys or /dev mounted inside the target if it
    # is interrupted: unmount them before removing anything, and never cross a
    # file-system boundary.
    if [[ -d "$ROOTFS" ]]; then
        local m
        for m in $(awk -v r="$ROOTFS" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
            umount -l "$m" 2>/dev/null || true
        done
        rm -rf --one-file-system "$ROOTFS"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t=$(now)
log "debootstrap --variant=minbase $SUITE into $ROOTFS from $MIRROR"
if ! debootstrap --variant=minbase --merged-usr "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1; then
    tail -n 20 "$ROOTFS.log" >&2
    rm -f "$ROOTFS.log"
    die "debootstrap failed (mirror $MIRROR reachable? set CHAOS_DEBIAN_MIRROR to another one)"
fi
rm -f "$ROOTFS.log"
log "debootstrap done in $(since "$t")"

t=$(now)
# apt sources: bookworm, bookworm-updates, bookworm-security (deb822).
rm -f "$ROOTFS/etc/apt/sources.list"
cat >"$ROOTFS/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF

# apt settings for images (the same spirit as Debian's official docker images).
cat >"$ROOTFS/etc/apt/apt.conf.d/90chaos-image" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
APT::AutoRemove::SuggestsImportant "false";
Acquire::Languages "none";
Acquire::GzipIndexes "true";
Acquire::CompressionTypes::Order:: "gz";
Dpkg::Use-Pty "false";
EOF
cat >"$ROOTFS/etc/apt/apt.conf.d/91chaos-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
# No docs, man pages or translations in installed packages (copyright files kept).
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/90chaos-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
EOF
# Packages must not try to start services while an image is built.
cat >"$ROOTFS/usr/sbin/policy-rc.d" <<'EOF'
#!/bin/sh
exit 101
EOF
chmod 0755 "$ROOTFS/usr/sbin/policy-rc.d"

# Remove what belongs to the build host or to a cache.
chroot "$ROOTFS" apt-get clean
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin \
       "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/log/*.log \
       "$ROOTFS"/var/log/apt/* "$ROOTFS"/tmp/* "$ROOTFS"/var/tmp/* \
       "$ROOTFS"/usr/share/doc/*/changelog* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/*
: >"$ROOTFS/etc/machine-id"
rm -f "$ROOTFS/etc/hostname" "$ROOTFS/etc/resolv.conf"
log "configured the root file system in $(since "$t")"

t=$(now)
log "importing as $TAG"
tar --numeric-owner -C "$ROOTFS" -c . | docker import \
    --change 'LABEL chaos.image=base' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["bash"]' \
    --message "chaos base: debootstrap --variant=minbase $SUITE" \
    - "$TAG" >/dev/null || die "docker import failed"
log "imported in $(since "$t")"

docker run --rm --label chaos.run=base-build "$TAG" true \
    || die "$TAG was imported but a container from it does not run"
log "built $TAG ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{ printf "%.0f MB", $1/1e6 }')) in $(since "$T0")"
