#!/usr/bin/env bash
# A local ElasticMQ (an SQS-compatible server, from Maven Central with
# dev/elasticmq/pom.xml) as a background JVM of this user, for the tests of
# SQS targets (internal/testenv's StartElasticMQ runs it). Queues and
# messages are kept under DIR (messages in H2), so a stop and a start find
# them, though not faithfully under load (messages acknowledged just before
# a stop may be missing after it). No Docker here, as for dev/up.sh.
#
#   elasticmq.sh install        resolve the jars into .run/elasticmq/libs
#                               (again only when pom.xml changed)
#   elasticmq.sh up DIR PORT    start (or check) the server on
#                               127.0.0.1:PORT; prints its URL and writes
#                               DIR/env (ELASTICMQ_URL)
#   elasticmq.sh stop DIR       stop the server (its state stays)
#   elasticmq.sh kill DIR       kill -9 the server
#   elasticmq.sh down DIR       stop the server, remove DIR
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
LIBS="$ROOT/.run/elasticmq/libs"
die() { echo "elasticmq.sh: $*" >&2; exit 1; }

install() {
  command -v mvn >/dev/null || die "mvn is missing: apt-get install -y maven"
  mkdir -p "$ROOT/.run/elasticmq"
  # One install at a time: tests of several packages start servers at once.
  # The lock's descriptor is closed before any server starts: a server that
  # inherited it would hold the lock for its life.
  exec 9>"$ROOT/.run/elasticmq/install.lock"
  flock 9
  resolve
  exec 9>&-
}

resolve() {
  local want
  want="$(sha256sum "$HERE/pom.xml" | cut -d' ' -f1)"
  [[ -f "$LIBS/.pom.sha256" && "$(cat "$LIBS/.pom.sha256")" == "$want" ]] && return 0
  local tmp="$LIBS.tmp" log="$ROOT/.run/elasticmq/mvn.log"
  rm -rf "$tmp"
  if ! mvn -B -q -Dstyle.color=never -f "$HERE/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$tmp" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "maven could not resolve ElasticMQ (see $log)"
  fi
  printf '%s\n' "$want" > "$tmp/.pom.sha256"
  rm -rf "$LIBS"
  mv "$tmp" "$LIBS"
}

running() {
  [[ -f "$DIR/elasticmq.pid" ]] && kill -0 "$(cat "$DIR/elasticmq.pid")" 2>/dev/null
}

answers() {
  curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/?Action=ListQueues" 2>/dev/null
}

up() {
  local port="$1"
  [[ "$port" =~ ^[0-9]+$ ]] || die "PORT must be a number"
  install
  echo "$port" > "$DIR/port"
  if [[ ! -f "$DIR/elasticmq.conf" ]]; then
    cat > "$DIR/elasticmq.conf" <<CONF
include classpath("application.conf")
node-address { protocol = "http", host = "127.0.0.1", port = $port, context-path = "" }
rest-sqs { enabled = true, bind-port = $port, bind-hostname = "127.0.0.1", sqs-limits = strict }
queues-storage { enabled = true, path = "$DIR/queues.conf" }
messages-storage { enabled = true, uri = "jdbc:h2:$DIR/messages;WRITE_DELAY=0" }
aws { region = "elasticmq", accountId = "000000000000" }
CONF
    cat > "$DIR/logback.xml" <<'LOG'
<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDOUT"/></root>
</configuration>
LOG
    printf 'ELASTICMQ_URL=http://127.0.0.1:%s\n' "$port" > "$DIR/env"
  fi
  if ! running; then
    # Two cores shared: a small heap, a serial collector, no C2 at start.
    setsid java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k \
      -Dconfig.file="$DIR/elasticmq.conf" -Dlogback.configurationFile="$DIR/logback.xml" \
      -cp "$LIBS/*" org.elasticmq.server.Main > "$DIR/server.log" 2>&1 < /dev/null &
    echo $! > "$DIR/elasticmq.pid"
  fi
  local deadline=$((SECONDS + 120))
  until answers "$port"; do
    running || { tail -n 30 "$DIR/server.log" >&2; die "the server exited while starting"; }
    (( SECONDS < deadline )) || { tail -n 30 "$DIR/server.log" >&2; die "not answering within 120s"; }
    sleep 0.3
  done
  echo "http://127.0.0.1:$port"
}

stop() {
  running || return 0
  local pid
  pid="$(cat "$DIR/elasticmq.pid")"
  kill "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null && (( SECONDS < deadline )); do sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
}

cmd="${1:-}"
if [[ "$cmd" == install ]]; then install; exit 0; fi
DIR="${2:-}"
[[ -n "$DIR" ]] || die "usage: $0 install | up DIR PORT | stop DIR | kill DIR | down DIR"
mkdir -p "$DIR"
DIR="$(readlink -f "$DIR")"
case "$cmd" in
  up) up "${3:-}" ;;
  stop) stop ;;
  kill) running && kill -9 "$(cat "$DIR/elasticmq.pid")" 2>/dev/null || true ;;
  down) stop; rm -rf "$DIR" ;;
  *) die "usage: $0 install | up DIR PORT | stop DIR | kill DIR | down DIR" ;;
esac
