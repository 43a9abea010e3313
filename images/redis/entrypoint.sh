#!/bin/sh
# A Redis node for chaos: AOF persistence in /data, its fsync policy from APPENDFSYNC
# (always | everysec | no), no RDB snapshots (so only the AOF decides what survives a crash).
# REPLICA_OF=host makes the node a replica of that primary. Extra arguments go to redis-server.
set -e
set -- --bind 0.0.0.0 --protected-mode no --port 6379 --dir /data \
    --appendonly yes --appendfsync "${APPENDFSYNC:-everysec}" --save "" \
    --aof-use-rdb-preamble no "$@"
if [ -n "${REPLICA_OF:-}" ]; then
    set -- "$@" --replicaof "$REPLICA_OF" 6379
fi
exec redis-server "$@"
