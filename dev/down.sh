#!/usr/bin/env bash
# Stop the local PostgreSQL and Kafka started by dev/up.sh (`make down`).
# Uses the pids/data dir recorded under .run/ and checks each pid really is
# our process before signalling it. Safe to run when nothing is running.
# State is kept: `make up` afterwards resumes with the same data.
set -euo pipefail

# shellcheck source=dev/lib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

if [[ ! -d "$RUN_DIR" ]]; then
  log "nothing to stop ($RUN_DIR does not exist)"
  exit 0
fi
take_lock
# Kafka first: it does not depend on postgres, but the app pipeline flows
# pg -> kafka, so this order never leaves a broker without its source.
kafka_stop
if [[ -x "$PG_BINDIR/pg_ctl" ]]; then
  pg_stop
else
  warn "no $PG_BINDIR/pg_ctl; cannot stop postgres (is postgresql-15 still installed?)"
fi
log "stopped"
