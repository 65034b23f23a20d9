-- +goose Up
-- Ingest: per-source settings, the first-party API source kind, tenant API
-- keys, and the delivery log.

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

-- Every authenticated delivery attempt leaves a compact durable record,
-- written in the batch transaction that decided its outcome. The first
-- attempt's record is its inbox row (received_at, event key, status) and a
-- conflict's is its inbox_conflicts row; only a duplicate, which stores
-- nothing else, needs a row of its own here. So the common path (a new
-- event) pays nothing extra. delivery_log shows all three as one list:
-- what support reads to answer "did you get event X, when, and how often?".
CREATE TABLE inbox_duplicates (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    inbox_id    bigint NOT NULL, -- no foreign key: a row lock per duplicate would cost more than it guards
    received_at timestamptz NOT NULL
);
CREATE INDEX inbox_duplicates_inbox_id ON inbox_duplicates (inbox_id);
CREATE INDEX inbox_duplicates_received_at ON inbox_duplicates USING brin (received_at);

CREATE VIEW delivery_log AS
SELECT i.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id,
       CASE i.status WHEN 'published' THEN 'accepted' ELSE i.status END AS outcome, i.id AS inbox_id
FROM inbox i
UNION ALL
SELECT d.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id, 'duplicate', i.id
FROM inbox_duplicates d JOIN inbox i ON i.id = d.inbox_id
UNION ALL
SELECT c.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id, 'conflict', i.id
FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id;

-- +goose Down
DROP VIEW delivery_log;
DROP TABLE inbox_duplicates, api_keys;
DELETE FROM sources WHERE kind = 'api';
ALTER TABLE sources DROP CONSTRAINT sources_kind_check;
ALTER TABLE sources ADD CONSTRAINT sources_kind_check
    CHECK (kind IN ('stripe', 'github', 'standard_webhooks', 'hmac'));
ALTER TABLE sources
    DROP COLUMN tolerance_seconds,
    DROP COLUMN max_body_bytes,
    DROP COLUMN hmac,
    DROP COLUMN ip_allowlist;
