#!/usr/bin/env bash
# A local RabbitMQ (Debian's rabbitmq-server, `make rabbitmq` installs it)
# as a background process of this user, for the tests of RabbitMQ targets
# (internal/testenv's StartRabbitMQ runs it): its own node name, ports and
# state under DIR, nothing of the system's service (/var/lib/rabbitmq,
# port 5672, epmd's 4369) touched. No Docker here, as for dev/up.sh.
#
#   rabbitmq.sh up DIR PORT     start (or check) the node listening on
#                               127.0.0.1:PORT; Erlang distribution on
#                               PORT+1, its epmd on PORT+2. Prints
#                               amqp://127.0.0.1:PORT/ and writes DIR/env
#                               (RABBITMQ_URL, RABBITMQ_USER,
#                               RABBITMQ_PASSWORD).
#   rabbitmq.sh stop DIR        stop the node (its state stays: a later up
#                               finds its durable queues and messages)
#   rabbitmq.sh kill DIR        kill -9 the node
#   rabbitmq.sh down DIR        stop the node and its epmd, remove DIR
set -euo pipefail

BIN=/usr/lib/rabbitmq/bin
die() { echo "rabbitmq.sh: $*" >&2; exit 1; }

[[ -x "$BIN/rabbitmq-server" ]] || die "rabbitmq-server is not installed: make rabbitmq (apt-get install rabbitmq-server)"

cmd="${1:-}"
DIR="${2:-}"
[[ -n "$DIR" ]] || die "usage: $0 up DIR PORT | stop DIR | kill DIR | down DIR"
mkdir -p "$DIR"
DIR="$(readlink -f "$DIR")"

# node_env exports what every rabbitmq command of this node reads.
node_env() {
  local port
  port="$(cat "$DIR/port")"
  export HOME="$DIR" # the Erlang cookie is $HOME/.erlang.cookie
  export RABBITMQ_NODENAME="sluice-test-$port@localhost"
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$port"
  export RABBITMQ_DIST_PORT=$((port + 1)) ERL_EPMD_PORT=$((port + 2))
  export RABBITMQ_MNESIA_BASE="$DIR/mnesia" RABBITMQ_LOG_BASE="$DIR/log"
  export RABBITMQ_CONFIG_FILE="$DIR/rabbitmq" RABBITMQ_ENABLED_PLUGINS_FILE="$DIR/enabled_plugins"
  export RABBITMQ_PID_FILE="$DIR/rabbitmq.pid" RABBITMQ_CONF_ENV_FILE="$DIR/rabbitmq-env.conf"
  export RABBITMQ_SERVER_ERL_ARGS="+S 1:1 +A 4" # two cores shared: one scheduler
}

running() {
  [[ -f "$DIR/rabbitmq.pid" ]] && kill -0 "$(cat "$DIR/rabbitmq.pid")" 2>/dev/null
}

up() {
  local port="$1"
  [[ "$port" =~ ^[0-9]+$ ]] || die "PORT must be a number"
  echo "$port" > "$DIR/port"
  node_env
  if [[ ! -f "$DIR/env" ]]; then
    local password
    password="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
    cat > "$DIR/rabbitmq.conf" <<CONF
listeners.tcp.default = 127.0.0.1:$port
default_user = sluice
default_pass = $password
loopback_users = none
log.file.level = warning
disk_free_limit.absolute = 50MB
CONF
    echo '[].' > "$DIR/enabled_plugins"
    : > "$DIR/rabbitmq-env.conf"
    printf 'RABBITMQ_URL=amqp://127.0.0.1:%s/\nRABBITMQ_USER=sluice\nRABBITMQ_PASSWORD=%s\n' "$port" "$password" > "$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
  fi
  if ! running; then
    mkdir -p "$DIR/log"
    setsid "$BIN/rabbitmq-server" > "$DIR/log/console.log" 2>&1 < /dev/null &
    echo $! > "$DIR/rabbitmq.pid"
  fi
  # Started when the node says so (its listeners are up then).
  local deadline=$((SECONDS + 120))
  until "$BIN/rabbitmqctl" -q await_startup --timeout 5 >/dev/null 2>&1; do
    running || { tail -n 30 "$DIR/log/console.log" >&2; die "the node exited while starting"; }
    (( SECONDS < deadline )) || { tail -n 30 "$DIR/log/console.log" >&2; die "not started within 120s"; }
    sleep 0.5
  done
  echo "amqp://127.0.0.1:$port/"
}

stop() {
  [[ -f "$DIR/port" ]] || return 0
  node_env
  running || return 0
  "$BIN/rabbitmqctl" -q stop >/dev/null 2>&1 || kill "$(cat "$DIR/rabbitmq.pid")" 2>/dev/null || true
  local deadline=$((SECONDS + 60))
  while running && (( SECONDS < deadline )); do sleep 0.2; done
  running && kill -9 "$(cat "$DIR/rabbitmq.pid")" 2>/dev/null || true
}

case "$cmd" in
  up) up "${3:-}" ;;
  stop) stop ;;
  kill)
    # The server script's process is the node (exec'd into the VM).
    running && kill -9 "$(cat "$DIR/rabbitmq.pid")" 2>/dev/null || true
    ;;
  down)
    stop
    if [[ -f "$DIR/port" ]]; then
      node_env
      # This node's own epmd (on its own port), no other's.
      pkill_pid="$(ss -ltnpH "sport = :$ERL_EPMD_PORT" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)"
      [[ -n "$pkill_pid" ]] && kill "$pkill_pid" 2>/dev/null || true
    fi
    rm -rf "$DIR"
    ;;
  *) die "usage: $0 up DIR PORT | stop DIR | kill DIR | down DIR" ;;
esac
