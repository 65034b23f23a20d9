#!/usr/bin/env bash
# The chaos run's own services: PostgreSQL 15 and Kafka 4.1 (KRaft, one
# broker), started with dev/up.sh's functions but on other ports and with all
# state under .run/chaos, so `make chaos` never touches the developer's
# `make up` services. The Go driver (dev/chaos) calls it to start the stack,
# to kill and restart a service at a random moment, and to stop it all.
#
#   stack.sh up                   fresh Kafka storage, Postgres kept; writes .run/chaos/env
#   stack.sh kafka-kill [i|all]   SIGKILL one broker or all of them (an outage)
#   stack.sh kafka-start [i|all]  start them again through the normal start path
#   stack.sh pg-kill | pg-start   SIGKILL Postgres's postmaster; start it again
#   stack.sh rabbitmq-kill | rabbitmq-start
#                                 SIGKILL the RabbitMQ node tenants' RabbitMQ
#                                 endpoints publish to; start it again
#   stack.sh down                 stop everything
#
#   CHAOS_PG_PORT (5633), CHAOS_KAFKA_PORT (9292: node i on 9292+i, its
#   controller on 19292+i), CHAOS_BROKERS (1, or 3 for the full run),
#   CHAOS_RABBITMQ_PORT (CHAOS_KAFKA_PORT+100; its Erlang ports the next two)
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
KAFKA_LIBS="$RUN_DIR/kafka/libs"
ENV_FILE="$RUN_DIR/env"
export SLUICE_KAFKA_LIBS="$KAFKA_LIBS"

# The jars are the same for every stack made from this pom: copy them from
# where they are already (SLUICE_KAFKA_LIBS_FROM, or this checkout's `make up`
# state) instead of resolving them again; kafka_fetch_libs resolves them when
# none matches.
chaos_copy_libs() {
  local want from
  want="$(file_hash "$DEV_DIR/kafka/pom.xml")"
  [[ -f "$KAFKA_LIBS/.pom.sha256" && "$(cat "$KAFKA_LIBS/.pom.sha256")" == "$want" ]] && return 0
  for from in "${SLUICE_KAFKA_LIBS_FROM:-}" "$REPO_ROOT/.run/kafka/libs"; do
    [[ -n "$from" && -f "$from/.pom.sha256" && "$(cat "$from/.pom.sha256")" == "$want" ]] || continue
    log "kafka: copying jars from $from"
    rm -rf "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
    mkdir -p "$(dirname "$KAFKA_LIBS")"
    cp -r "$from" "$KAFKA_LIBS.tmp"
    mv "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
    return 0
  done
}

# Kafka nodes: CHAOS_BROKERS of them (1 or 3), each broker and controller of
# one KRaft quorum, node i on CHAOS_KAFKA_PORT+i (controller +10000), state
# in .run/chaos/kafka/n<i>. kafka_node points dev/up.sh's KAFKA_* settings at
# node i, so its start and wait functions serve every node.
BROKERS="${CHAOS_BROKERS:-1}"
KAFKA_BASE_PORT="$SLUICE_KAFKA_PORT"
KAFKA_TOP="$RUN_DIR/kafka"

kafka_node() {
  local i="$1"
  KAFKA_PORT=$(( KAFKA_BASE_PORT + i ))
  KAFKA_CONTROLLER_PORT=$(( KAFKA_BASE_PORT + 10000 + i ))
  KAFKA_STATE="$KAFKA_TOP/n$i"
  KAFKA_DATA="$KAFKA_STATE/data"
  KAFKA_PROPS="$KAFKA_STATE/server.properties"
  KAFKA_PID_FILE="$KAFKA_STATE/kafka.pid"
  KAFKA_LOG="$KAFKA_STATE/kafka.log"
}

# Which nodes a verb acts on: "all" (default) or one index.
nodes_of() {
  if [[ "${1:-all}" == all ]]; then seq 0 $(( BROKERS - 1 )); else echo "$1"; fi
}

# The template's single-node settings with the quorum, listeners and, with
# three nodes, production's replication (3, min.insync.replicas 2).
chaos_render_props() {
  local i="$1" voters="" j rf=1 isr=1
  for j in $(seq 0 $(( BROKERS - 1 ))); do
    voters+="${voters:+,}$(( j + 1 ))@127.0.0.1:$(( KAFKA_BASE_PORT + 10000 + j ))"
  done
  if (( BROKERS >= 3 )); then rf=3; isr=2; fi
  mkdir -p "$KAFKA_STATE"
  sed -e "s|@KAFKA_PORT@|$KAFKA_PORT|g" \
      -e "s|@CONTROLLER_PORT@|$KAFKA_CONTROLLER_PORT|g" \
      -e "s|@DATA_DIR@|$KAFKA_DATA|g" \
      -e "s|^node.id=.*|node.id=$(( i + 1 ))|" \
      -e "s|^controller.quorum.voters=.*|controller.quorum.voters=$voters|" \
      -e "s#^\(offsets.topic.replication.factor\|transaction.state.log.replication.factor\|share.coordinator.state.topic.replication.factor\|default.replication.factor\)=.*#\1=$rf#" \
      -e "s#^\(transaction.state.log.min.isr\|share.coordinator.state.topic.min.isr\|min.insync.replicas\)=.*#\1=$isr#" \
      "$DEV_DIR/kafka/server.properties.tmpl" > "$KAFKA_PROPS"
}

chaos_kafka_kill() {
  local i pid
  for i in $(nodes_of "${1:-all}"); do
    kafka_node "$i"
    if pid="$(kafka_pid)"; then
      log "kafka n$i: SIGKILL (pid $pid)"
      kill -KILL "$pid"
      while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
    rm -f "$KAFKA_PID_FILE"
  done
}

# Start the nodes that are down, then wait until each answers: a quorum of
# three needs two voters before any answers, so all start first.
chaos_kafka_start() {
  local i
  ensure_java
  for i in $(nodes_of "${1:-all}"); do
    kafka_node "$i"
    kafka_pid >/dev/null || kafka_start
  done
  for i in $(nodes_of "${1:-all}"); do
    kafka_node "$i"
    kafka_wait_answering "$(cat "$KAFKA_PID_FILE")"
  done
}

# A fresh cluster: every node formatted with one cluster id.
chaos_kafka_fresh() {
  local i cluster_id
  chaos_kafka_kill all
  rm -rf "$KAFKA_TOP"/n*
  cluster_id="$("$KAFKA_BIN/kafka-storage" random-uuid)"
  for i in $(nodes_of all); do
    kafka_node "$i"
    chaos_render_props "$i"
    "$KAFKA_BIN/kafka-storage" format -t "$cluster_id" -c "$KAFKA_PROPS" >/dev/null
  done
  chaos_kafka_start all
}

# Postgres dies as a crash would (SIGKILL of the postmaster; its backends
# exit when they see it gone), and comes back through pg_up.
chaos_pg_kill() {
  local datadir pid
  datadir="$(pg_recorded_datadir)"
  pid="$(head -n1 "$datadir/postmaster.pid" 2>/dev/null || true)"
  if pid_matches "$pid" postgres "$datadir"; then
    log "postgres: SIGKILL (pid $pid)"
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
}

chaos_pg_start() {
  local deadline=$(( SECONDS + START_TIMEOUT ))
  # Backends of the killed postmaster may hold its shared memory a moment.
  until (pg_up) 2>>"$RUN_DIR/pg-restart.log"; do
    (( SECONDS < deadline )) || die "postgres did not come back; see $RUN_DIR/pg-restart.log"
    sleep 1
  done
}

# The RabbitMQ node of the tenants' RabbitMQ endpoints (dev/rabbitmq/rabbitmq.sh,
# Debian's rabbitmq-server): fresh at each up, like Kafka's storage; a kill
# is a crash (its durable queue and confirmed messages survive it), a start
# the normal start path.
RABBITMQ_DIR="$RUN_DIR/rabbitmq"
RABBITMQ_PORT="${CHAOS_RABBITMQ_PORT:-$(( SLUICE_KAFKA_PORT + 100 ))}"
chaos_rabbitmq() { bash "$DEV_DIR/rabbitmq/rabbitmq.sh" "$1" "$RABBITMQ_DIR" "${@:2}"; }

brokers_list() {
  local i out=""
  for i in $(nodes_of all); do out+="${out:+,}127.0.0.1:$(( KAFKA_BASE_PORT + i ))"; done
  printf '%s\n' "$out"
}

case "${1:-}" in
  up)
    mkdir -p "$RUN_DIR"
    pg_up
    chaos_copy_libs
    # Each run starts from empty Kafka storage: topics and offsets of an
    # earlier run would be read as this run's.
    chaos_kafka_fresh
    kafka_node 0
    rm -f "$ENV_FILE"
    write_env
    sed -i "s|^SLUICE_KAFKA_BROKERS=.*|SLUICE_KAFKA_BROKERS=$(brokers_list)|" "$ENV_FILE"
    printf 'CHAOS_BROKERS=%s\n' "$BROKERS" >> "$ENV_FILE"
    log "rabbitmq: starting on 127.0.0.1:$RABBITMQ_PORT"
    chaos_rabbitmq down
    chaos_rabbitmq up "$RABBITMQ_PORT" >/dev/null
    cat "$RABBITMQ_DIR/env" >> "$ENV_FILE"
    ;;
  rabbitmq-kill) chaos_rabbitmq kill ;;
  rabbitmq-start) chaos_rabbitmq up "$RABBITMQ_PORT" >/dev/null ;;
  kafka-kill) chaos_kafka_kill "${2:-all}" ;;
  kafka-start) chaos_kafka_start "${2:-all}" ;;
  pg-kill) chaos_pg_kill ;;
  pg-start) chaos_pg_start ;;
  down)
    # Its storage is wiped at the next up, and a quorum losing its voters
    # one by one waits out each controlled shutdown: kill the brokers.
    chaos_kafka_kill all
    pg_stop
    chaos_rabbitmq down
    ;;
  *)
    echo "usage: $0 up|kafka-kill [i|all]|kafka-start [i|all]|pg-kill|pg-start|rabbitmq-kill|rabbitmq-start|down" >&2
    exit 2
    ;;
esac
