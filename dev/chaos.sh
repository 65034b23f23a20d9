#!/usr/bin/env bash
# `make chaos`: build sluice and the chaos driver, start the chaos stack
# (dev/chaos/stack.sh: its own Postgres and Kafka under .run/chaos, never the
# `make up` services), run the driver, and stop the stack whatever happens.
#   CHAOS_QUICK=1   the short run (one broker, one instance of each stage, fewer faults)
#   CHAOS_UPGRADE=1 the rolling upgrade from the previous release (dev/upgrade/PREVIOUS,
#                   built once into ~/.cache by dev/upgrade/previous.sh) to this build
#   CHAOS_SEED=n    replay a run
#   CHAOS_KEEP=1    leave the stack running afterwards, for a post-mortem
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

go build -o bin/sluice ./cmd/sluice
go build -o bin/sluice-chaos ./dev/chaos
if [[ "${CHAOS_UPGRADE:-}" == 1 ]]; then
  CHAOS_PREVIOUS_BIN="$(bash dev/upgrade/previous.sh)"
  export CHAOS_PREVIOUS_BIN
fi

stop_stack() {
  if [[ -z "${CHAOS_KEEP:-}" ]]; then
    bash dev/chaos/stack.sh down >/dev/null 2>&1 || true
  fi
}
trap stop_stack EXIT
# The full run's Kafka is three brokers, as production runs it; the quick
# and upgrade runs have one.
if [[ "${CHAOS_QUICK:-}" != 1 && "${CHAOS_UPGRADE:-}" != 1 ]]; then
  export CHAOS_BROKERS="${CHAOS_BROKERS:-3}"
fi
bash dev/chaos/stack.sh up
set -a
# shellcheck source=/dev/null
. .run/chaos/env
set +a
bin/sluice-chaos
