#!/usr/bin/env bash
# `make clean` for the local services: stop them (dev/down.sh), then delete
# all their state: .run/ (jars, Kafka data, .run/env) and the PostgreSQL
# cluster, including one kept outside the tree (recorded in .run/pg/datadir).
set -euo pipefail

# shellcheck source=dev/lib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

take_lock
bash "$DEV_DIR/down.sh"

# Out-of-tree cluster homes of this checkout: the recorded one, plus any
# /tmp/sluice-pg-<this checkout's id>-<port> left by a run whose .run/ was
# deleted by hand (stopped first if still running).
homes=()
recorded="$(pg_recorded_datadir)"
[[ -n "$recorded" ]] && homes+=("$(pg_home_of "$recorded")")
for d in /tmp/sluice-pg-"$(repo_id)"-*; do
  [[ -d "$d" ]] && homes+=("$d")
done

for home in "${homes[@]+"${homes[@]}"}"; do
  case "$home" in
    "$RUN_DIR"/*) continue ;;               # removed with .run/ below
    /tmp/sluice-pg-*) ;;                    # ours: safe to remove
    *) warn "not removing unexpected recorded cluster location $home"; continue ;;
  esac
  [[ -d "$home" ]] || continue
  if pg_running "$home/data"; then
    log "postgres: stopping orphaned cluster $home/data"
    as_pg "$PG_BINDIR/pg_ctl" -D "$home/data" -m fast -w -t "$STOP_TIMEOUT" stop >/dev/null || true
  fi
  log "removing $home"
  rm -rf "$home"
done

log "removing $RUN_DIR"
rm -rf "$RUN_DIR"
