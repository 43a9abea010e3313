#!/usr/bin/env bash
# Entrypoint of the chaos-ozone image, following Ozone's own dist entrypoint
# (hadoop-ozone/dist/src/main/dockerlibexec/entrypoint.sh), so the same compose file serves this
# image and apache/ozone:
#   SLEEP_SECONDS                   sleep first
#   WAITFOR=host:port               wait until the port answers (WAITFOR_TIMEOUT, default 300 s)
#   <FILE>.<EXT>_<key>=<value>      write key=value into $OZONE_CONF_DIR/<file>.<ext>
#                                   (OZONE-SITE.XML_ozone.om.service.ids=omservice)
#   ENSURE_SCM_INITIALIZED=<file>   run `ozone scm --init` when <file> is missing
#   ENSURE_SCM_BOOTSTRAPPED=<file>  run `ozone scm --bootstrap` when <file> is missing
#   ENSURE_OM_INITIALIZED=<file>    run `ozone om --init` when <file> is missing
# then runs the command.
set -euo pipefail
OZONE_CONF_DIR=${OZONE_CONF_DIR:-/etc/hadoop}

log() { echo "entrypoint: $*" >&2; }

if [ -n "${SLEEP_SECONDS:-}" ]; then sleep "$SLEEP_SECONDS"; fi

if [ -n "${WAITFOR:-}" ]; then
  host=${WAITFOR%:*}; port=${WAITFOR##*:}
  deadline=$(( $(date +%s) + ${WAITFOR_TIMEOUT:-300} ))
  log "waiting for $host:$port"
  until (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; do
    if [ "$(date +%s)" -ge "$deadline" ]; then log "$host:$port did not answer in ${WAITFOR_TIMEOUT:-300} s"; exit 1; fi
    sleep 1
  done
fi

/opt/ozone/libexec/envtoconf

if [ -n "${ENSURE_SCM_INITIALIZED:-}" ] && [ ! -f "$ENSURE_SCM_INITIALIZED" ]; then
  log "first start: ozone scm --init"
  ozone scm --init
fi
if [ -n "${ENSURE_SCM_BOOTSTRAPPED:-}" ] && [ ! -f "$ENSURE_SCM_BOOTSTRAPPED" ]; then
  log "first start: ozone scm --bootstrap"
  ozone scm --bootstrap
fi
if [ -n "${ENSURE_OM_INITIALIZED:-}" ] && [ ! -f "$ENSURE_OM_INITIALIZED" ]; then
  log "first start: ozone om --init"
  ozone om --init
fi

exec "$@"
