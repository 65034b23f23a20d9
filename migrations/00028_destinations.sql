-- +goose Up
-- Destinations: a tenant's own endpoints, and a delivery row per event and
-- endpoint that matches it (docs/destinations.md).
--
-- The consumer group sluice-destinations fans each published event out into
-- deliveries, in the batch's transaction, and holds no HTTP call; the
-- deliverer claims an endpoint's due deliveries and sends them. An
-- endpoint's backlog is its own rows: a slow or dead endpoint delays nothing
-- but itself.
CREATE TABLE endpoints (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id       uuid NOT NULL REFERENCES tenants (id),
    url             text NOT NULL,
    description     text NOT NULL DEFAULT '',
    -- Event-type patterns: exact names, a trailing ".*" (stripe.invoice.*)
    -- or "*".
    filters         text[] NOT NULL,
    -- Ordered: a delivery waits for every earlier one of its resource key.
    ordered         boolean NOT NULL DEFAULT true,
    -- NULL: the deployment's default (and never above its cap).
    rate_per_second int CHECK (rate_per_second > 0),
    concurrency     int CHECK (concurrency > 0),
    -- Static headers, a JSON object sealed with the key ring (they may hold
    -- the receiver's credentials).
    headers_key_id  text,
    headers_sealed  bytea,
    disabled_at     timestamptz,
    -- operator | gone (the endpoint answered 410) | failing (every attempt
    -- failed for the deployment's failing horizon)
    disabled_reason text,
    -- The first failure of the current streak; NULL once an attempt succeeds.
    failing_since   timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX endpoints_tenant ON endpoints (tenant_id, id);

-- Signing secrets (whsec_), sealed; several during a rotation's overlap, all
-- of them sign every request.
CREATE TABLE endpoint_secrets (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    key_id      text NOT NULL,
    ciphertext  bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz
);
CREATE INDEX endpoint_secrets_endpoint ON endpoint_secrets (endpoint_id);

-- One row per (endpoint, event). id is also the order of a resource key's
-- deliveries: one partition's records are fanned out in their order, and a
-- key lives on one partition.
CREATE TABLE deliveries (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id   uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    tenant_id     uuid NOT NULL,
    -- Stable per endpoint and event: the same on every retry, replay and
    -- rewind, so the receiver deduplicates on it. Unique per endpoint, so a
    -- rewind of the fan-out group inserts nothing.
    webhook_id    text NOT NULL,
    partition_key text NOT NULL,
    -- pending: to send at next_at, delivered: a 2xx, dead: given up after
    -- the retry horizon.
    state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts      int NOT NULL DEFAULT 0,
    next_at       timestamptz NOT NULL DEFAULT now(),
    -- A claimed delivery is leased until then: no other deliverer sends it
    -- meanwhile, and one killed mid-request leaves a lease that runs out.
    -- Not indexed, so a claim is a heap-only update: the indexes do not
    -- grow with every attempt.
    leased_until  timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- When the relay published the event (its Kafka timestamp, within the
    -- relay's lag of ingest's commit): where accepted-to-delivered starts.
    accepted_at   timestamptz,
    delivered_at  timestamptz,
    last_status   int,
    last_error    text,
    latency_ms    int,
    -- The event: its body is loaded from the inbox row, or kept here when
    -- there is none (the built-in effects' intents, test events).
    inbox_id      bigint,
    payload       bytea,
    event_id      text NOT NULL,
    event_type    text NOT NULL,
    source        text NOT NULL,
    subject       text NOT NULL DEFAULT '',
    event_time    timestamptz,
    traceparent   text NOT NULL DEFAULT '',
    content_type  text NOT NULL DEFAULT 'application/json',
    topic         text NOT NULL,
    partition     int NOT NULL,
    "offset"      bigint NOT NULL,
    UNIQUE (endpoint_id, webhook_id)
) WITH (fillfactor = 80); -- room on the page for the claims' heap-only updates
-- An ordered endpoint's heads: the oldest pending delivery of each key.
CREATE INDEX deliveries_heads ON deliveries (endpoint_id, partition_key, id) WHERE state = 'pending';
-- An unordered endpoint's due deliveries, and the earliest due of any.
CREATE INDEX deliveries_due ON deliveries (endpoint_id, next_at) WHERE state = 'pending';
-- Lists by endpoint and time, the trail by event, the lifecycle by age.
CREATE INDEX deliveries_endpoint_created ON deliveries (endpoint_id, created_at, id);
CREATE INDEX deliveries_inbox ON deliveries (inbox_id) WHERE inbox_id IS NOT NULL;
CREATE INDEX deliveries_created ON deliveries (created_at);

-- Failed attempts (a delivery's successful one lives on its own row: the
-- success path writes no attempt row).
CREATE TABLE delivery_attempts (
    delivery_id bigint NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempt     int NOT NULL,
    endpoint_id uuid NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    status      int,
    latency_ms  int,
    -- connect | timeout | tls | refused_address | status | ...
    error_class text NOT NULL,
    error       text NOT NULL DEFAULT '',
    -- The first 1 KiB of the answer.
    answer      text NOT NULL DEFAULT '',
    PRIMARY KEY (delivery_id, attempt)
);

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE endpoint_secrets;
DROP TABLE endpoints;
