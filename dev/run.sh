#!/usr/bin/env bash
# `make run`: the whole pipeline on this machine, and a demo that gives every
# page of the console something to show: a signed invoice.paid to its grant,
# a conflict, a dead letter, a tenant event type, an endpoint delivering to a
# local receiver (one failed attempt, then successes) and a reconciliation
# run against a fake Stripe API. Everything listens on loopback. Runs in the
# foreground until Ctrl-C.
#
# Run from a checkout where `make up` and `make build` ran (make runs them
# first): it reads .run/env, runs bin/sluice and keeps the demo's tenant,
# its secrets and the fakes' addresses under .run/demo/, so the next make run
# uses the same tenant again. Each step that can take more than a few
# seconds says so before it starts.
set -euo pipefail
# The sources (for building the demo's fakes): where this script is.
src=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)

say() { printf '[run] %s\n' "$*" >&2; }

# .run/env (written by make up) holds the services, the key ring, where the
# pipeline listens (SLUICE_HTTP_ADDR, SLUICE_ADMIN_ADDR and their URLs) and
# its endpoint policy: serve and every bin/sluice command read it.
set -a
. .run/env
# SLUICE_KAFKA_SECURE=1: Kafka over SASL_SSL as the sluice user, allowed its
# prefix only (dev/up.sh writes .run/kafka/secure.env).
if [[ "${SLUICE_KAFKA_SECURE:-}" == 1 ]]; then
  . .run/kafka/secure.env
fi
set +a
ingest_url=${SLUICE_INGEST_URL:?.run/env has no SLUICE_INGEST_URL: run make up}
admin_url=${SLUICE_ADMIN_URL:?.run/env has no SLUICE_ADMIN_URL: run make up}
psql="$(pg_config --bindir)/psql"

# Migrations, as one line.
applied=$("$psql" "$SLUICE_DATABASE_URL" -XAtc "SELECT coalesce(max(version_id), 0) FROM sluice_schema_migrations" 2>/dev/null || echo 0)
pending=$(find "$src/migrations" -name '[0-9]*.sql' -printf '%f\n' | awk -F_ -v applied="$applied" '$1 + 0 > applied {n++} END {print n + 0}')
if ((pending > 0)); then
  say "database: applying $pending migrations (an empty database takes about 10 s)"
fi
bin/sluice migrate --log-level warn

# A slot left behind by an earlier `make run` and invalidated since (the dev
# server caps retained WAL, see dev/up.sh) is refused by the relay, as it must
# be in production. Here, repair it the way an operator would: resync from the
# last time the relay confirmed everything (or the outbox's 24 h retention).
slot=${SLUICE_SLOT:-sluice}
if [[ "$("$psql" "$SLUICE_DATABASE_URL" -XAtc "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '$slot'")" == lost ]]; then
  since=$("$psql" "$SLUICE_DATABASE_URL" -XAtc "SELECT to_char(COALESCE((SELECT confirmed_time FROM cdc_slots WHERE slot = '$slot'), now() - interval '24 hours') AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")
  say "slot $slot was invalidated while nothing read it: sluice cdc resync --since $since"
  bin/sluice cdc resync --since "$since"
fi

serve_pid=
world_pid=
stop() {
  kill -TERM $serve_pid $world_pid 2>/dev/null || true
  wait $serve_pid $world_pid 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT TERM

# The demo's outside world (dev/demo): a fake Stripe API and the demo
# endpoint's receiver, on the loopback addresses they had last time.
mkdir -p .run/demo .run/bin
world=.run/bin/demo
if [[ ! -x "$world" ]]; then
  say "building $world (the demo's fake Stripe API and receiver, dev/demo: a few seconds)"
fi
go build -C "$src" -o "$PWD/$world" ./dev/demo
: >.run/demo/world.log
"$world" --state .run/demo/world.json >.run/demo/world.log 2>&1 &
world_pid=$!
stripe_url=
receiver_url=
for _ in $(seq 100); do
  stripe_url=$(awk '$1 == "stripe" && $2 ~ /^http/ {print $2; exit}' .run/demo/world.log)
  receiver_url=$(awk '$1 == "receiver" && $2 ~ /^http/ {print $2; exit}' .run/demo/world.log)
  [[ -n "$stripe_url" && -n "$receiver_url" ]] && break
  kill -0 "$world_pid" 2>/dev/null || { cat .run/demo/world.log >&2; exit 1; }
  sleep 0.1
done
[[ -n "$stripe_url" && -n "$receiver_url" ]] || { say "the demo's fakes did not start: .run/demo/world.log"; exit 1; }

# The demo tenant (made once, then the one .run/demo/demo.json names),
# pointed at the fakes before serve starts, so serve's reconciliation
# schedule never asks an address the fake Stripe API left.
demo=(bin/sluice demo --log-level warn --state .run/demo/demo.json --stripe-api "$stripe_url" --receiver "$receiver_url")
"${demo[@]}" --step prepare

say "starting sluice serve: ingest $ingest_url, admin $admin_url (log .run/sluice.log)"
bin/sluice serve >.run/sluice.log 2>&1 &
serve_pid=$!
deadline=$((SECONDS + 60))
until curl -fsS "$admin_url/readyz" >/dev/null 2>&1; do
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    say "sluice serve exited; its log:"
    tail -n 30 .run/sluice.log >&2
    exit 1
  fi
  if ((SECONDS > deadline)); then
    say "sluice serve not ready after 60s; its log (.run/sluice.log):"
    tail -n 30 .run/sluice.log >&2
    exit 1
  fi
  sleep 0.2
done

"${demo[@]}" --step send --url "$ingest_url" --console-token | tee .run/demo/demo.txt
console_token=$(awk '$1 == "console" {print $3; exit}' .run/demo/demo.txt)

cat <<EOT

Sluice is running (pid $serve_pid; log .run/sluice.log); .run/env has every address below.
  ingest      POST $ingest_url/v1/ingest/{source_id}      (\$SLUICE_INGEST_URL)
  health      $ingest_url/healthz   ready: $ingest_url/readyz (ingest)
  admin       $admin_url/readyz (every stage)  $admin_url/metrics  (\$SLUICE_ADMIN_URL; private: loopback only)
  console     $admin_url/console/   sign in with this operate token (kept in .run/demo/demo.json):
              $console_token
              another: bin/sluice admintoken create --role operate   (--role read; --tenant T: one tenant's view)
  fakes       stripe API $stripe_url, receiver $receiver_url   (dev/demo; log .run/demo/world.log)
  postgres    $SLUICE_DATABASE_URL
  kafka       $SLUICE_KAFKA_BROKERS
  lag         dev/kafka/bin/kafka-consumer-groups --bootstrap-server $SLUICE_KAFKA_BROKERS --describe --group sluice.credits
Ctrl-C stops it (services keep running: make down stops them).
EOT
wait "$serve_pid"
