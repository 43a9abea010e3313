#!/usr/bin/env bash
# End-to-end check of the Docker mechanics the harness uses, on the etcd profile:
# up + health, pause/unpause, kill/start, and an iptables partition of etcd1
# applied from the tools image in etcd1's network namespace, then healed.
# Needs chaos-etcd:latest and chaos-tools:latest (see images/README.md).
# Everything it creates is labelled chaos.run=smoke-<pid> and removed on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUN="smoke-$$"
PROJECT="chaossmoke$$"
OVERRIDE=$(mktemp)
cat >"$OVERRIDE" <<EOF
services:
  etcd1: { labels: { chaos.run: $RUN } }
  etcd2: { labels: { chaos.run: $RUN } }
  etcd3: { labels: { chaos.run: $RUN } }
EOF
COMPOSE=(docker-compose -p "$PROJECT" -f docker-compose.yml -f "$OVERRIDE" --profile etcd)

cleanup() {
    "${COMPOSE[@]}" down -t 2 >/dev/null 2>&1 || true
    rm -f "$OVERRIDE"
}
trap cleanup EXIT

ms() { date +%s%3N; }
say() { printf '[smoke] %s\n' "$*"; }
fail() { printf '[smoke] FAIL: %s\n' "$*" >&2; exit 1; }
cid() { "${COMPOSE[@]}" ps -q "$1"; }
port() { docker port "$(cid "$1")" 2379 | head -n 1; }
ip() { docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$(cid "$1")"; }
# etcdctl from the etcd image on the host network, against a published port.
ctl() { local ep=$1; shift; docker run --rm --label "chaos.run=$RUN" --network host \
    --entrypoint etcdctl chaos-etcd:latest --endpoints="$ep" --dial-timeout=1s "$@"; }
tools() { local node=$1; shift; docker run --rm --label "chaos.run=$RUN" \
    --network "container:$(cid "$node")" --cap-add NET_ADMIN chaos-tools:latest "$@"; }
healthy() { [[ $(docker inspect -f '{{.State.Health.Status}}' "$(cid "$1")") == healthy ]]; }
wait_until() { local what=$1 limit=$2; shift 2; local t; t=$(ms)
    until "$@" >/dev/null 2>&1; do (( $(ms) - t < limit )) || fail "$what: not within ${limit}ms"; sleep 0.1; done
    say "$what: $(( $(ms) - t ))ms"; }
all_healthy() { healthy etcd1 && healthy etcd2 && healthy etcd3; }
reads() { ctl "$1" --command-timeout=1s get "$2" --print-value-only | grep -qx "$3"; }

t=$(ms); "${COMPOSE[@]}" up -d >/dev/null 2>&1 || fail "docker-compose up"
wait_until "3 nodes healthy after up (from $t)" 60000 all_healthy
P1=$(port etcd1); P2=$(port etcd2)
ctl "$P2" put k v0 >/dev/null

# pause / unpause etcd2
docker pause "$(cid etcd2)" >/dev/null
wait_until "write via etcd1 with etcd2 paused" 10000 ctl "$P1" --command-timeout=1s put k v1
docker unpause "$(cid etcd2)" >/dev/null
wait_until "etcd2 reads v1 after unpause" 10000 reads "$P2" k v1

# kill / start etcd1 (its published port changes on start)
docker kill "$(cid etcd1)" >/dev/null
wait_until "write via etcd2 with etcd1 killed" 10000 ctl "$P2" --command-timeout=1s put k v2
docker start "$(cid etcd1)" >/dev/null
P1=$(port etcd1)
wait_until "etcd1 reads v2 after start" 20000 reads "$P1" k v2

# partition: isolate etcd1 from etcd2 and etcd3 (INPUT and OUTPUT), host still reaches it
I2=$(ip etcd2); I3=$(ip etcd3)
t=$(ms)
tools etcd1 sh -c "iptables -A INPUT -s $I2 -j DROP && iptables -A INPUT -s $I3 -j DROP && iptables -A OUTPUT -d $I2 -j DROP && iptables -A OUTPUT -d $I3 -j DROP"
say "partition applied in $(( $(ms) - t ))ms"
wait_until "write via etcd2 during the partition" 10000 ctl "$P2" --command-timeout=1s put k v3
ctl "$P1" --command-timeout=2s get k >/dev/null 2>&1 && fail "a linearizable read through the isolated etcd1 answered"
say "linearizable read through etcd1 timed out (expected)"
ctl "$P1" --command-timeout=1s get k --consistency=s --print-value-only | grep -qx v2 || fail "serializable read through etcd1"
say "serializable read through etcd1 answered the stale value v2 (expected)"
t=$(ms); tools etcd1 iptables -F; say "healed in $(( $(ms) - t ))ms"
wait_until "etcd1 reads v3 after heal" 20000 reads "$P1" k v3
say "status: $(ctl "$P1,$P2,$(port etcd3)" endpoint status -w json)"
say "OK"
