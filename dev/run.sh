#!/usr/bin/env bash
# `make run`: the whole pipeline on this machine, with a demo that sends one
# signed invoice.paid and shows the grant it causes. Runs in the foreground
# until Ctrl-C. Expects `make up` and `make build` to have run (make does).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# .run/env (written by make up) holds the services and the key ring.
set -a
. .run/env
# SLUICE_KAFKA_SECURE=1: Kafka over SASL_SSL as the sluice user, allowed its
# prefix only (dev/up.sh writes .run/kafka/secure.env).
if [[ "${SLUICE_KAFKA_SECURE:-}" == 1 ]]; then
  . .run/kafka/secure.env
fi
set +a
export SLUICE_HTTP_ADDR=${SLUICE_HTTP_ADDR:-127.0.0.1:8080}
export SLUICE_ADMIN_ADDR=${SLUICE_ADMIN_ADDR:-127.0.0.1:8082}
base_url="http://${SLUICE_HTTP_ADDR/#:/127.0.0.1:}"
admin_url="http://${SLUICE_ADMIN_ADDR/#:/127.0.0.1:}"

bin/sluice migrate

# A slot left behind by an earlier `make run` and invalidated since (the dev
# server caps retained WAL, see dev/up.sh) is refused by the relay, as it must
# be in production. Here, repair it the way an operator would: resync from the
# last time the relay confirmed everything (or the outbox's 24 h retention).
psql="$(pg_config --bindir)/psql"
slot=${SLUICE_SLOT:-sluice}
if [[ "$("$psql" "$SLUICE_DATABASE_URL" -Atc "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '$slot'")" == lost ]]; then
  since=$("$psql" "$SLUICE_DATABASE_URL" -Atc "SELECT to_char(COALESCE((SELECT confirmed_time FROM cdc_slots WHERE slot = '$slot'), now() - interval '24 hours') AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")
  echo "slot $slot was invalidated while nothing read it: sluice cdc resync --since $since"
  bin/sluice cdc resync --since "$since"
fi

bin/sluice serve >.run/sluice.log 2>&1 &
serve_pid=$!
fake_pid=
stop() {
  kill -TERM "$serve_pid" $fake_pid 2>/dev/null || true
  wait "$serve_pid" $fake_pid 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT TERM

deadline=$((SECONDS + 60))
until curl -fsS "$admin_url/readyz" >/dev/null 2>&1; do
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    echo "sluice serve exited; its log:" >&2
    tail -n 30 .run/sluice.log >&2
    exit 1
  fi
  if ((SECONDS > deadline)); then
    echo "sluice serve not ready after 60s; its log (.run/sluice.log):" >&2
    tail -n 30 .run/sluice.log >&2
    exit 1
  fi
  sleep 0.2
done

bin/sluice demo --url "$base_url" | tee .run/demo.txt
tenant=$(awk '$1 == "tenant" {print $2; exit}' .run/demo.txt)

# More for the console to show: a tenant event type and a destination (its
# receiver does not exist, so its deliveries fail and retry: the
# destinations page has attempts to show).
printf '{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}}' >.run/demo-schema.json
bin/sluice eventtype create --tenant "$tenant" --kind api --type order.placed --resource-type order \
  --schema-file .run/demo-schema.json >/dev/null || echo "(demo event type not made: see above)"
bin/sluice endpoint create --tenant "$tenant" --url https://receiver.example/hooks --filter 'stripe.invoice.*' \
  --description "demo receiver (does not exist)" >/dev/null || echo "(demo endpoint not made: see above)"
# A reconciliation run: the demo's Stripe source gets API credentials for a
# fake Stripe API on a local port (dev/console/fakestripe, stripetest's
# fake), which holds a paid invoice of the demo's customer whose webhook
# never came; `sluice reconcile` recovers it (a correction, and its grant).
# The fake serves until Ctrl-C, so the console can start runs against it.
source_id=$(awk '$1 == "source" {print $2; exit}' .run/demo.txt)
customer=$(awk '$1 == "workspace" {gsub(/\)/, "", $4); print $4; exit}' .run/demo.txt)
go build -o .run/bin/fakestripe ./dev/console/fakestripe
.run/bin/fakestripe --customer "$customer" >.run/fakestripe.txt 2>&1 &
fake_pid=$!
stripe_url=
for _ in $(seq 50); do
  # The file appears once the background process starts: until then, no url.
  stripe_url=$(awk '$1 == "url" {print $2; exit}' .run/fakestripe.txt 2>/dev/null || true)
  [[ -n "$stripe_url" ]] && break
  sleep 0.1
done
if [[ -n "$stripe_url" ]]; then
  printf '{"secret_key":"rk_test_demo","api_base":"%s"}' "$stripe_url" >.run/demo-stripe.json
  bin/sluice source set-api-credentials --source "$source_id" --credentials-file .run/demo-stripe.json >/dev/null &&
    bin/sluice reconcile --source "$source_id" --since "$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%SZ)" 2>.run/demo-reconcile.log ||
    echo "(demo reconciliation not run: see above and .run/demo-reconcile.log)"
else
  echo "(demo reconciliation not run: the fake Stripe API did not start; .run/fakestripe.txt)"
fi
# A token for the console, a day long; make another with
# `bin/sluice admintoken create --role operate` (or --role read, --tenant T).
console_token=$(bin/sluice admintoken create --role operate --name "make run console" --expires 24h -o json | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')

cat <<EOT

Sluice is running (pid $serve_pid; log .run/sluice.log).
  ingest      POST $base_url/v1/ingest/{source_id}
  health      $base_url/healthz   ready: $base_url/readyz (ingest)
  admin       $admin_url/readyz (every stage)  $admin_url/metrics  (private: 127.0.0.1 only)
  stripe API  $stripe_url (a fake, for the demo source's reconciliation)
  console     $admin_url/console/   sign in with this operate token (a day long):
              $console_token
              another: bin/sluice admintoken create --role operate   (--role read; --tenant T: one tenant's view)
  postgres    $SLUICE_DATABASE_URL
  kafka       $SLUICE_KAFKA_BROKERS
  lag         dev/kafka/bin/kafka-consumer-groups --bootstrap-server $SLUICE_KAFKA_BROKERS --describe --group sluice.credits
  topics      dev/kafka/bin/kafka-topics --bootstrap-server $SLUICE_KAFKA_BROKERS --list
Ctrl-C stops it (services keep running: make down stops them).
EOT
wait "$serve_pid"
