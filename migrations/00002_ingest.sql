-- +goose Up
-- Ingest: per-source settings, the first-party API source kind, tenant API
-- keys, and the delivery attempt log.

-- Per-source settings; NULL means the instance default (5 minutes; 1 MiB,
-- 25 MiB for GitHub sources). hmac holds the generic HMAC scheme and where
-- its event id and type are found. ip_allowlist is an extra layer on top of
-- the signature, never instead of it; empty allows any address.
ALTER TABLE sources
    ADD COLUMN tolerance_seconds integer CHECK (tolerance_seconds > 0),
    ADD COLUMN max_body_bytes    bigint CHECK (max_body_bytes > 0 AND max_body_bytes <= 26214400),
    ADD COLUMN hmac              jsonb,
    ADD COLUMN ip_allowlist      cidr[] NOT NULL DEFAULT '{}';

-- 'api' is the tenant's own first-party source behind POST /v1/events: one
-- per tenant, so its event keys stay the same whichever API key sent them.
ALTER TABLE sources DROP CONSTRAINT sources_kind_check;
ALTER TABLE sources ADD CONSTRAINT sources_kind_check
    CHECK (kind IN ('stripe', 'github', 'standard_webhooks', 'hmac', 'api'));

-- Tenant API keys, stored as the SHA-256 of a high-entropy random key: the
-- key itself is printed once and never kept.
CREATE TABLE api_keys (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id  uuid NOT NULL REFERENCES tenants (id),
    source_id  uuid NOT NULL REFERENCES sources (id),
    key_sha256 bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz,
    CONSTRAINT api_keys_key_sha256 UNIQUE (key_sha256)
);

-- One compact row per authenticated delivery attempt, duplicates included,
-- written in the batch transaction that decided its outcome: what support
-- reads to answer "did you get event X, and when?". Append-only and
-- time-ordered, hence a BRIN index for retention by time.
CREATE TABLE delivery_attempts (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    received_at    timestamptz NOT NULL,
    tenant_id      uuid NOT NULL,
    source_id      uuid NOT NULL,
    source_account text NOT NULL,
    event_id       text NOT NULL,
    outcome        text NOT NULL,
    inbox_id       bigint
);
CREATE INDEX delivery_attempts_received_at ON delivery_attempts USING brin (received_at);
CREATE INDEX delivery_attempts_event_key ON delivery_attempts (source_id, event_id);

-- +goose Down
DROP TABLE delivery_attempts, api_keys;
DELETE FROM sources WHERE kind = 'api';
ALTER TABLE sources DROP CONSTRAINT sources_kind_check;
ALTER TABLE sources ADD CONSTRAINT sources_kind_check
    CHECK (kind IN ('stripe', 'github', 'standard_webhooks', 'hmac'));
ALTER TABLE sources
    DROP COLUMN tolerance_seconds,
    DROP COLUMN max_body_bytes,
    DROP COLUMN hmac,
    DROP COLUMN ip_allowlist;
