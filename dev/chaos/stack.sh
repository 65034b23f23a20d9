#!/usr/bin/env bash
# The chaos run's own services: PostgreSQL 15 and Kafka 4.1 (KRaft, one
# broker), started with dev/up.sh's functions but on other ports and with all
# state under .run/chaos, so `make chaos` never touches the developer's
# `make up` services. The Go driver (dev/chaos) calls it to start the stack,
# to kill and restart a service at a random moment, and to stop it all.
#
#   stack.sh up            fresh Kafka storage, Postgres kept; writes .run/chaos/env
#   stack.sh kafka-kill    SIGKILL the broker (an outage)
#   stack.sh kafka-start   start it again through the normal start path
#   stack.sh down          stop both
#
#   CHAOS_PG_PORT (5633), CHAOS_KAFKA_PORT (9292; controller +10000)
set -euo pipefail

export SLUICE_PG_PORT="${CHAOS_PG_PORT:-5633}"
export SLUICE_KAFKA_PORT="${CHAOS_KAFKA_PORT:-9292}"
unset SLUICE_KAFKA_CONTROLLER_PORT
# shellcheck source=dev/up.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../up.sh"

# Everything below .run/chaos: lib.sh derived its paths from .run, redo them.
RUN_DIR="$REPO_ROOT/.run/chaos"
PG_STATE="$RUN_DIR/pg"
PG_DATADIR_FILE="$PG_STATE/datadir"
KAFKA_STATE="$RUN_DIR/kafka"
KAFKA_LIBS="$KAFKA_STATE/libs"
KAFKA_DATA="$KAFKA_STATE/data"
KAFKA_PROPS="$KAFKA_STATE/server.properties"
KAFKA_PID_FILE="$KAFKA_STATE/kafka.pid"
KAFKA_LOG="$KAFKA_STATE/kafka.log"
ENV_FILE="$RUN_DIR/env"
export SLUICE_KAFKA_LIBS="$KAFKA_LIBS"

# The jars are the same for every stack made from this pom: copy them from a
# checkout that has them (SLUICE_KAFKA_LIBS_FROM, this checkout's .run or the
# main one) instead of resolving them again; kafka_fetch_libs resolves them
# when none matches.
chaos_copy_libs() {
  local want from
  want="$(file_hash "$DEV_DIR/kafka/pom.xml")"
  [[ -f "$KAFKA_LIBS/.pom.sha256" && "$(cat "$KAFKA_LIBS/.pom.sha256")" == "$want" ]] && return 0
  for from in "${SLUICE_KAFKA_LIBS_FROM:-}" "$REPO_ROOT/.run/kafka/libs" /work/main/.run/kafka/libs; do
    [[ -n "$from" && -f "$from/.pom.sha256" && "$(cat "$from/.pom.sha256")" == "$want" ]] || continue
    log "kafka: copying jars from $from"
    rm -rf "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
    mkdir -p "$KAFKA_STATE"
    cp -r "$from" "$KAFKA_LIBS.tmp"
    mv "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
    return 0
  done
}

chaos_kafka_kill() {
  local pid
  if pid="$(kafka_pid)"; then
    log "kafka: SIGKILL (pid $pid)"
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$KAFKA_PID_FILE"
}

case "${1:-}" in
  up)
    mkdir -p "$RUN_DIR"
    pg_up
    chaos_copy_libs
    # Each run starts from empty Kafka storage: topics and offsets of an
    # earlier run would be read as this run's.
    chaos_kafka_kill
    rm -rf "$KAFKA_DATA" "$KAFKA_STATE/formatted"
    kafka_up
    write_env
    ;;
  kafka-kill) chaos_kafka_kill ;;
  kafka-start) kafka_up ;;
  down)
    kafka_stop
    pg_stop
    ;;
  *)
    echo "usage: $0 up|kafka-kill|kafka-start|down" >&2
    exit 2
    ;;
esac
