#!/usr/bin/env bash
# A broker with the secured listeners for the tests when the `make up`
# broker has none yet (started before dev/kafka/secure.properties.tmpl
# existed, or tests run without `make up`): internal/testenv's SecureKafka
# runs `secure-stack.sh up` and reads .run/kafka-secure/env. dev/up.sh's
# functions on other ports (plaintext 9392, SASL_SSL 9393, SSL 9394,
# controller 19392), state under .run/kafka-secure, the jars of .run/kafka.
# Idempotent and locked: test binaries running in parallel share one.
#
# A test that needs a cluster of its own (a tenant's Kafka, stopped and
# started again by the test) names it: SLUICE_SECURE_KAFKA_NAME (state
# under .run/<name>), SLUICE_SECURE_KAFKA_PORT (plaintext; SASL_SSL +1,
# SSL +2) and SLUICE_SECURE_KAFKA_CONTROLLER_PORT (default port+10000).
# down stops the broker and keeps its state: the next up starts it again.
#
#   secure-stack.sh up | down
set -euo pipefail

export SLUICE_KAFKA_PORT="${SLUICE_SECURE_KAFKA_PORT:-9392}"
unset SLUICE_KAFKA_CONTROLLER_PORT SLUICE_KAFKA_SASL_PORT SLUICE_KAFKA_SSL_PORT
if [[ -n "${SLUICE_SECURE_KAFKA_CONTROLLER_PORT:-}" ]]; then
  export SLUICE_KAFKA_CONTROLLER_PORT="$SLUICE_SECURE_KAFKA_CONTROLLER_PORT"
fi
# shellcheck source=dev/up.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../up.sh"

RUN_DIR="$REPO_ROOT/.run/${SLUICE_SECURE_KAFKA_NAME:-kafka-secure}"
KAFKA_STATE="$RUN_DIR"
KAFKA_DATA="$KAFKA_STATE/data"
KAFKA_PROPS="$KAFKA_STATE/server.properties"
KAFKA_PID_FILE="$KAFKA_STATE/kafka.pid"
KAFKA_LOG="$KAFKA_STATE/kafka.log"
ENV_FILE="$RUN_DIR/env"

case "${1:-}" in
  up)
    take_lock
    kafka_up
    [[ -f "$ENV_FILE" ]] || printf '# Written by dev/kafka/secure-stack.sh.\n' > "$ENV_FILE"
    write_secure_env "$ENV_FILE"
    write_client_env "$KAFKA_STATE/secure.env"
    ;;
  down)
    take_lock
    kafka_stop
    ;;
  *)
    echo "usage: $0 up|down" >&2
    exit 2
    ;;
esac
