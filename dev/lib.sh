# shellcheck shell=bash
# shellcheck disable=SC2034  # the settings below are used by the sourcing scripts
# Shared helpers for dev/up.sh, dev/down.sh and dev/clean.sh.
# Sourced, not executed. Everything the local services write lives under
# <repo>/.run/ (git-ignored), except the PostgreSQL cluster when the
# `postgres` system user cannot reach .run/ (see pg_pick_home).

# ---------------------------------------------------------------------------
# Locations and settings
# ---------------------------------------------------------------------------

# Resolve the repo from this file's location, never from $PWD, so that
# `make up`, `bash dev/up.sh` and `cd /; /path/to/dev/up.sh` all agree.
DEV_DIR="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
REPO_ROOT="$(cd "$DEV_DIR/.." && pwd)"
RUN_DIR="$REPO_ROOT/.run"

PG_PORT="${SLUICE_PG_PORT:-5433}"
KAFKA_PORT="${SLUICE_KAFKA_PORT:-9092}"
# The KRaft controller port is derived from the broker port (+10000, or
# -10000 near the top of the range) so two checkouts that were given
# different SLUICE_KAFKA_PORTs never fight over the controller port.
if [[ -n "${SLUICE_KAFKA_CONTROLLER_PORT:-}" ]]; then
  KAFKA_CONTROLLER_PORT="$SLUICE_KAFKA_CONTROLLER_PORT"
elif (( KAFKA_PORT + 10000 <= 65535 )); then
  KAFKA_CONTROLLER_PORT=$(( KAFKA_PORT + 10000 ))
else
  KAFKA_CONTROLLER_PORT=$(( KAFKA_PORT - 10000 ))
fi

# The secured client listeners (dev/kafka/secure.properties.tmpl) sit next
# to the broker port: SASL_SSL on +1, SSL (mutual TLS) on +2.
KAFKA_SASL_PORT="${SLUICE_KAFKA_SASL_PORT:-$(( KAFKA_PORT + 1 ))}"
KAFKA_SSL_PORT="${SLUICE_KAFKA_SSL_PORT:-$(( KAFKA_PORT + 2 ))}"

# Debian installs each major version side by side; pg_config/psql in PATH
# point at the newest one, so use the version-15 directory explicitly.
PG_BINDIR="${SLUICE_PG_BINDIR:-/usr/lib/postgresql/15/bin}"
PG_DB="sluice"
PG_SUPERUSER="postgres"

PG_STATE="$RUN_DIR/pg"                 # always in the tree: bookkeeping
PG_DATADIR_FILE="$PG_STATE/datadir"    # absolute path of the PGDATA in use
# SLUICE_PG_TLS=1: the server speaks TLS (ssl=on, plaintext still accepted)
# with a certificate for localhost and 127.0.0.1 signed by a throwaway CA,
# and .run/env's URL asks sslmode=verify-full against that CA.
PG_TLS="${SLUICE_PG_TLS:-0}"
PG_TLS_DIR="$PG_STATE/tls"             # ca.crt (what clients trust), ca.key

KAFKA_STATE="$RUN_DIR/kafka"
KAFKA_LIBS="$KAFKA_STATE/libs"
KAFKA_DATA="$KAFKA_STATE/data"
KAFKA_PROPS="$KAFKA_STATE/server.properties"
KAFKA_PID_FILE="$KAFKA_STATE/kafka.pid"
KAFKA_LOG="$KAFKA_STATE/kafka.log"
KAFKA_BIN="$DEV_DIR/kafka/bin"

ENV_FILE="$RUN_DIR/env"

# How long to wait for a service to come up or go down before giving up.
START_TIMEOUT="${SLUICE_START_TIMEOUT:-90}"
STOP_TIMEOUT="${SLUICE_STOP_TIMEOUT:-30}"

# ---------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------

log()  { printf '[dev] %s\n' "$*" >&2; }
warn() { printf '[dev] WARNING: %s\n' "$*" >&2; }
die()  { printf '[dev] ERROR: %s\n' "$*" >&2; exit 1; }

# Print the last lines of a log file to stderr, for error messages.
show_tail() {
  local file="$1" n="${2:-40}"
  if [[ -r "$file" ]]; then
    printf '[dev] ---- last %s lines of %s ----\n' "$n" "$file" >&2
    tail -n "$n" "$file" >&2 || true
    printf '[dev] ----\n' >&2
  else
    printf '[dev] (no log at %s)\n' "$file" >&2
  fi
}

# ---------------------------------------------------------------------------
# Small utilities
# ---------------------------------------------------------------------------

is_root() { [[ "$(id -u)" -eq 0 ]]; }

# True if something accepts TCP connections on 127.0.0.1:$1.
# Uses bash's /dev/tcp so no nc/ss is needed; timeout guards against a
# port that swallows SYNs.
port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# True if $1 is a live process whose command line contains every further
# argument. Used so that a recycled pid (very likely in containers after a
# restart) is never mistaken for, or killed as, one of our services.
pid_matches() {
  local pid="$1"; shift
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  local cmd
  cmd="$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)" || return 1
  local needle
  for needle in "$@"; do
    [[ "$cmd" == *"$needle"* ]] || return 1
  done
}

file_hash() { sha256sum "$1" | cut -c1-64; }

# Short, stable id of this checkout (used for out-of-tree directory names).
repo_id() { printf '%s' "$REPO_ROOT" | sha256sum | cut -c1-10; }

# Serialize up/down/clean of the same checkout (e.g. `make up` twice in
# parallel). SLUICE_DEV_LOCKED lets clean.sh call down.sh while holding it.
# The lock lives on fd 9 and is released when the holder exits, so the
# long-running servers we spawn must be started with fd 9 closed.
take_lock() {
  [[ -n "${SLUICE_DEV_LOCKED:-}" ]] && return 0
  mkdir -p "$RUN_DIR"
  exec 9>"$RUN_DIR/.lock"
  if ! flock -w 120 9; then
    die "another dev/up.sh, down.sh or clean.sh holds $RUN_DIR/.lock"
  fi
  export SLUICE_DEV_LOCKED=1
}

# ---------------------------------------------------------------------------
# Prerequisites (install with apt-get when root, else explain)
# ---------------------------------------------------------------------------

APT_UPDATED=""
apt_install() {
  if ! is_root; then
    die "missing $*; install it (e.g. 'sudo apt-get install -y $*') and re-run"
  fi
  command -v apt-get >/dev/null || die "missing $* and no apt-get to install it with"
  log "installing $* with apt-get ..."
  if [[ -z "$APT_UPDATED" ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

ensure_postgres_installed() {
  if [[ ! -x "$PG_BINDIR/postgres" || ! -x "$PG_BINDIR/initdb" || ! -x "$PG_BINDIR/psql" ]]; then
    apt_install postgresql-15 postgresql-client-15
    [[ -x "$PG_BINDIR/postgres" ]] || die "postgresql-15 installed but $PG_BINDIR/postgres is missing"
  fi
  if is_root; then
    getent passwd postgres >/dev/null \
      || die "running as root but there is no 'postgres' system user to run the server as (the postgresql-15 package creates it)"
  fi
}

# Sets JAVA to a Java >= 17 binary.
ensure_java() {
  JAVA="java"
  [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]] && JAVA="$JAVA_HOME/bin/java"
  if ! command -v "$JAVA" >/dev/null; then
    apt_install openjdk-17-jre-headless
    JAVA="java"
  fi
  local v
  v="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p')"
  v="${v%%.*}"
  if [[ -z "$v" || "$v" -lt 17 ]]; then
    die "Kafka 4 needs Java 17 or newer; '$JAVA' is version '${v:-unknown}' (set JAVA_HOME)"
  fi
}

ensure_maven() {
  command -v mvn >/dev/null || apt_install maven
}

# The tools the docs' commands use (the manual's test runs them): curl,
# jq and openssl, from Debian's packages when missing.
ensure_doc_tools() {
  local missing=()
  command -v curl >/dev/null || missing+=(curl)
  command -v jq >/dev/null || missing+=(jq)
  command -v openssl >/dev/null || missing+=(openssl)
  [[ ${#missing[@]} -eq 0 ]] || apt_install "${missing[@]}"
}

# ---------------------------------------------------------------------------
# PostgreSQL helpers
# ---------------------------------------------------------------------------

# Run a PostgreSQL server binary as the user that must own the cluster:
# initdb/postgres refuse to run as root, so as root we become the
# `postgres` system user. `cd /` because that user may not be allowed into
# the caller's cwd (e.g. /root/...), which makes initdb/pg_ctl complain.
# `9>&-`: the postmaster that pg_ctl spawns must not inherit our lock fd
# (see take_lock), or it would hold the lock for as long as it runs.
as_pg() {
  if is_root; then
    if command -v runuser >/dev/null; then
      (cd / && runuser -u postgres -- "$@" 9>&-)
    else
      local q; printf -v q '%q ' "$@"
      (cd / && su postgres -s /bin/sh -c "$q" 9>&-)
    fi
  else
    "$@" 9>&-
  fi
}

# The PGDATA currently recorded for this checkout ("" if none).
pg_recorded_datadir() {
  if [[ -s "$PG_DATADIR_FILE" ]]; then
    head -n1 "$PG_DATADIR_FILE"
  fi
}

# The layout of a "pg home" directory (owned by the server's user):
#   <home>/data          PGDATA
#   <home>/sock          unix_socket_directories
#   <home>/postgres.log  pg_ctl -l log
#   <home>/.initialized  written after initdb + our config succeeded; a
#                        data dir without it was interrupted halfway
pg_home_of() { dirname "$1"; }

# True if the PostgreSQL server owning $1 (PGDATA) is running: postmaster.pid
# exists and names a live postgres process (not a recycled pid).
pg_running() {
  local datadir="$1" pid
  [[ -f "$datadir/postmaster.pid" ]] || return 1
  pid="$(head -n1 "$datadir/postmaster.pid" 2>/dev/null)" || return 1
  # pg_ctl starts the postmaster as `postgres -D <datadir>`
  pid_matches "$pid" postgres "$datadir"
}

# Remove lock files that a dead server left behind. PostgreSQL cleans these
# itself unless their pid has been recycled by another live process, in
# which case it refuses to start; only called when pg_running said no.
pg_remove_stale_locks() {
  local datadir="$1" home
  home="$(pg_home_of "$datadir")"
  if [[ -f "$datadir/postmaster.pid" ]]; then
    log "postgres: removing stale $datadir/postmaster.pid"
    rm -f "$datadir/postmaster.pid"
  fi
  rm -f "$home"/sock/.s.PGSQL.*.lock "$home"/sock/.s.PGSQL.[0-9]* 2>/dev/null || true
}

# Make the throwaway CA (once) and a server certificate it signs for
# localhost and 127.0.0.1 in $PG_TLS_DIR; install the server's pair into
# PGDATA ($1) as the server's user, key 0600 (postgres refuses a key others
# can read). A certificate already installed is kept.
pg_tls_files() {
  local datadir="$1"
  if as_pg test -s "$datadir/server.crt" && as_pg test -s "$datadir/server.key"; then
    return 0
  fi
  command -v openssl >/dev/null || apt_install openssl
  mkdir -p "$PG_TLS_DIR"
  chmod 755 "$PG_TLS_DIR"
  if [[ ! -s "$PG_TLS_DIR/ca.crt" ]]; then
    log "postgres: making a throwaway CA in $PG_TLS_DIR"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=sluice dev CA" \
      -keyout "$PG_TLS_DIR/ca.key" -out "$PG_TLS_DIR/ca.crt" 2>/dev/null
    chmod 600 "$PG_TLS_DIR/ca.key"
  fi
  local tmp
  tmp="$(mktemp -d)"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tmp/server.key" -out "$tmp/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$tmp/ext"
  openssl x509 -req -in "$tmp/server.csr" -CA "$PG_TLS_DIR/ca.crt" -CAkey "$PG_TLS_DIR/ca.key" -CAcreateserial \
    -days 825 -extfile "$tmp/ext" -out "$tmp/server.crt" 2>/dev/null
  as_pg sh -c 'umask 077 && cat > "$0"' "$datadir/server.crt" < "$tmp/server.crt"
  as_pg sh -c 'umask 077 && cat > "$0"' "$datadir/server.key" < "$tmp/server.key"
  rm -rf "$tmp"
}

pg_stop() {
  local datadir
  datadir="$(pg_recorded_datadir)"
  if [[ -z "$datadir" || ! -d "$datadir" ]]; then
    log "postgres: no cluster recorded, nothing to stop"
    return 0
  fi
  if ! pg_running "$datadir"; then
    [[ -f "$datadir/postmaster.pid" ]] && pg_remove_stale_locks "$datadir"
    log "postgres: not running"
    rm -f "$PG_STATE/postgres.pid"
    return 0
  fi
  log "postgres: stopping ($datadir)"
  if ! as_pg "$PG_BINDIR/pg_ctl" -D "$datadir" -m fast -w -t "$STOP_TIMEOUT" stop >/dev/null; then
    # fast shutdown did not finish in time: immediate is still crash-safe
    # (WAL replay on next start), unlike killing the processes.
    warn "postgres: fast shutdown timed out, using immediate mode"
    as_pg "$PG_BINDIR/pg_ctl" -D "$datadir" -m immediate -w -t "$STOP_TIMEOUT" stop >/dev/null || true
  fi
  rm -f "$PG_STATE/postgres.pid"
}

# ---------------------------------------------------------------------------
# Kafka helpers
# ---------------------------------------------------------------------------

# Pid of our running broker, or nothing (exit 1). Checks the command line so
# a recycled pid is never taken for the broker.
kafka_pid() {
  local pid props
  [[ -s "$KAFKA_PID_FILE" ]] || return 1
  pid="$(head -n1 "$KAFKA_PID_FILE")"
  pid_matches "$pid" kafka.Kafka || return 1
  # Its properties file (the last argument) as the broker was given it: a
  # worktree whose .run is a symlink names the same file by another path,
  # and must not take the running broker for a stale one.
  props="$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | tail -n1)"
  [[ -n "$props" && "$(readlink -f "$props")" == "$(readlink -f "$KAFKA_PROPS")" ]] || return 1
  printf '%s\n' "$pid"
}

kafka_stop() {
  local pid
  if ! pid="$(kafka_pid)"; then
    [[ -e "$KAFKA_PID_FILE" ]] && log "kafka: removing stale $KAFKA_PID_FILE"
    rm -f "$KAFKA_PID_FILE"
    log "kafka: not running"
    return 0
  fi
  log "kafka: stopping (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$(( SECONDS + STOP_TIMEOUT ))
  while kill -0 "$pid" 2>/dev/null; do
    if (( SECONDS >= deadline )); then
      warn "kafka: still running after ${STOP_TIMEOUT}s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
      break
    fi
    sleep 0.5
  done
  rm -f "$KAFKA_PID_FILE"
}
