#!/bin/sh
# Writes /etc/ceph/ceph.keyring at image build time: every entity of the test cluster with a
# fixed key and its caps. The mon's --mkfs imports it, so the auth database starts with all of
# them (no `ceph auth add` at run time); each daemon finds its own key in the same file.
# The keys are derived from the entity names (sha256, first 16 bytes): test keys, not secrets.
set -eu
K=/etc/ceph/ceph.keyring
rm -f "$K"
add() { # entity key caps...
    name=$1 key=$2
    shift 2
    create=
    [ -e "$K" ] || create=--create-keyring
    ceph-authtool "$K" $create -n "$name" --add-key "$key" "$@" >/dev/null
}
add mon. 'AQAAAAAAAAAAABAAH/OITKsjSx8Rv6uKRQwhKg==' --cap mon 'allow *'
add client.admin 'AQAAAAAAAAAAABAAVsMs85Y/d7CAUqZFVmIGoQ==' \
    --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *'
add mgr.mon1 'AQAAAAAAAAAAABAAXXSEED06an1cl2dIOPTxMA==' \
    --cap mon 'allow profile mgr' --cap osd 'allow *' --cap mds 'allow *'
add osd.0 'AQAAAAAAAAAAABAAz6969vvU2kQPY9Peco2j+g==' \
    --cap mon 'allow profile osd' --cap mgr 'allow profile osd' --cap osd 'allow *'
add osd.1 'AQAAAAAAAAAAABAAp13lYB2otFNpvrjDfZB3oQ==' \
    --cap mon 'allow profile osd' --cap mgr 'allow profile osd' --cap osd 'allow *'
add osd.2 'AQAAAAAAAAAAABAAeE0o+93qzyI7B1ru1dBFow==' \
    --cap mon 'allow profile osd' --cap mgr 'allow profile osd' --cap osd 'allow *'
for rgw in ceph-rgw1 ceph-rgw2; do
    add "client.rgw.$rgw" 'AQAAAAAAAAAAABAAR52K2F5PPfAyOWFVzvuEnQ==' \
        --cap mon 'allow rw' --cap osd 'allow rwx' --cap mgr 'allow rw'
done
chmod 0644 "$K"
[ "$(grep -c '^\[' "$K")" = 8 ] || { echo "keyring incomplete" >&2; exit 1; }
