#!/bin/bash
# One node of the chaos Ceph cluster; the role is the first argument:
#
#   ceph-node mon         mon "mon1" and mgr "mon1" (node ceph-mon)
#   ceph-node osd ID      OSD ID (0, 1, 2) on BlueStore in a 4 GiB sparse file under
#                         /var/lib/ceph/osd (the node's volume)
#   ceph-node rgw         radosgw, beast frontend on :7480; makes sure the S3 user exists first
#
# Every node waits for what it needs (the harness starts them all at once). State lives in the
# node's volume, so a restarted container (docker restart, kill + start) comes back as the same
# daemon: the mon re-addresses its monmap if its IP changed, an OSD skips its mkfs.
set -euo pipefail

log() { echo "ceph-node[$ROLE]: $*" >&2; }
ROLE=${1:-}
shift || true

# The S3 user every scenario signs with (the scenario's `s3:` section names the same keys).
S3_UID=chaos
S3_ACCESS_KEY=${S3_ACCESS_KEY:-chaos-ceph}
S3_SECRET_KEY=${S3_SECRET_KEY:-chaos-ceph-secret-key}

my_ip() { hostname -i | awk '{print $1}'; }

wait_for_mon() {
    local n=0
    until timeout 10 ceph --connect-timeout 5 mon stat >/dev/null 2>&1; do
        n=$((n + 1))
        [ $((n % 10)) = 0 ] && log "still waiting for the mon ($n s)"
        sleep 1
    done
}

case "$ROLE" in
mon)
    ID=mon1
    DATA=/var/lib/ceph/mon/ceph-$ID
    IP=$(my_ip)
    if [ ! -e "$DATA/chaos-done" ]; then
        log "creating mon $ID at $IP"
        rm -rf "$DATA"
        mkdir -p "$DATA"
        monmaptool --create --fsid "$(ceph-conf --lookup fsid)" \
            --addv "$ID" "[v2:$IP:3300,v1:$IP:6789]" /tmp/monmap >/dev/null
        ceph-mon --mkfs -i "$ID" --monmap /tmp/monmap --keyring /etc/ceph/ceph.keyring
        touch "$DATA/chaos-done"
    else
        # A restarted container may have a new IP: move the mon there before it starts.
        ceph-mon -i "$ID" --extract-monmap /tmp/monmap >/dev/null 2>&1
        if ! monmaptool --print /tmp/monmap | grep -q "v2:$IP:3300"; then
            log "IP changed to $IP: rewriting the monmap"
            monmaptool --rm "$ID" /tmp/monmap >/dev/null
            monmaptool --addv "$ID" "[v2:$IP:3300,v1:$IP:6789]" /tmp/monmap >/dev/null
            ceph-mon -i "$ID" --inject-monmap /tmp/monmap
        fi
    fi
    mkdir -p /var/lib/ceph/mgr/ceph-$ID
    # The mgr beside the mon, restarted if it dies.
    (
        while true; do
            ceph-mgr -i "$ID" -f || true
            sleep 1
        done
    ) &
    exec ceph-mon -i "$ID" -f --public-addr "$IP" "$@"
    ;;
osd)
    ID=${1:?osd needs its id}
    shift
    UUID=$(printf '00000000-0000-4000-8000-%012d' "$ID")
    DATA=/var/lib/ceph/osd/ceph-$ID
    if [ ! -e "$DATA/chaos-done" ]; then
        wait_for_mon
        log "creating osd.$ID (uuid $UUID) on BlueStore in $DATA/block"
        ceph osd new "$UUID" "$ID" >/dev/null
        rm -rf "$DATA"
        mkdir -p "$DATA"
        ceph-osd -i "$ID" --mkfs --osd-uuid "$UUID" --osd-data "$DATA"
        touch "$DATA/chaos-done"
    fi
    exec ceph-osd -i "$ID" -f "$@"
    ;;
rgw)
    NAME=client.rgw.$(hostname)
    # The user with fixed keys; two gateways may race to create it, so retry until it shows.
    # A restarted gateway (same container) knows it is there and starts at once.
    if [ ! -e /var/lib/ceph/chaos-s3-user ]; then
        wait_for_mon
        until timeout 60 radosgw-admin user info --uid="$S3_UID" >/dev/null 2>&1; do
            log "creating S3 user $S3_UID"
            timeout 60 radosgw-admin user create --uid="$S3_UID" --display-name="chaos" \
                --access-key="$S3_ACCESS_KEY" --secret-key="$S3_SECRET_KEY" >/dev/null 2>&1 || sleep 1
        done
        touch /var/lib/ceph/chaos-s3-user
    fi
    log "S3 user $S3_UID ready; starting radosgw"
    exec radosgw -n "$NAME" -f "$@"
    ;;
ready)
    # The healthcheck: ceph-node ready mon|osd ID|rgw.
    case "${1:-}" in
    mon) timeout 5 ceph --connect-timeout 3 mon stat >/dev/null 2>&1 ;;
    osd)
        timeout 5 ceph --admin-daemon "/var/run/ceph/ceph-osd.$2.asok" status 2>/dev/null \
            | grep -q '"state": "active"'
        ;;
    rgw) exec 3<>/dev/tcp/127.0.0.1/7480 ;;
    *) exit 1 ;;
    esac
    ;;
*)
    echo "usage: ceph-node mon | osd ID | rgw | ready ROLE [ID]" >&2
    exit 2
    ;;
esac
