-- +goose Up
-- Tenancy: a tenant owns sources (verified webhook senders) and workspaces
-- (the things that receive business effects).
CREATE TABLE tenants (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sources (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id   uuid NOT NULL REFERENCES tenants (id),
    kind        text NOT NULL CHECK (kind IN ('stripe', 'github', 'standard_webhooks', 'hmac')),
    -- The provider account the source speaks for (a Stripe account id, a
    -- GitHub App id...). Part of the event key.
    account     text NOT NULL,
    disabled_at timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sources_tenant_kind_account UNIQUE (tenant_id, kind, account)
);

-- Several secrets per source allow rotation with overlap. Secrets are
-- encrypted with the key ring from SLUICE_SECRET_KEY; key_id names the key.
CREATE TABLE source_secrets (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_id  uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    key_id     text NOT NULL,
    ciphertext bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz
);
CREATE INDEX source_secrets_source ON source_secrets (source_id);

CREATE TABLE workspaces (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id  uuid NOT NULL REFERENCES tenants (id),
    name       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Workspaces are found, within the verified source's tenant, from the
-- provider's customer id.
CREATE TABLE workspace_customers (
    tenant_id   uuid NOT NULL REFERENCES tenants (id),
    customer_id text NOT NULL,
    workspace_id uuid NOT NULL REFERENCES workspaces (id),
    PRIMARY KEY (tenant_id, customer_id)
);

-- The inbox: one row per accepted delivery. The event key is unique, so the
-- database, not a prior lookup, decides what is a duplicate.
CREATE TABLE inbox (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      uuid NOT NULL,
    source_id      uuid NOT NULL,
    source_account text NOT NULL,
    event_id       text NOT NULL,
    event_type     text NOT NULL,
    object_type    text NOT NULL DEFAULT '',
    object_id      text NOT NULL DEFAULT '',
    event_time     timestamptz,
    received_at    timestamptz NOT NULL DEFAULT now(),
    -- published: an outbox row was written with it; unhandled: no handler
    -- knows the type yet (kept for a later replay); quarantined: failed its
    -- schema (reason says why).
    status         text NOT NULL CHECK (status IN ('published', 'unhandled', 'quarantined')),
    reason         text NOT NULL DEFAULT '',
    body_sha256    bytea NOT NULL,
    body           bytea NOT NULL,
    CONSTRAINT inbox_event_key UNIQUE (source_id, source_account, event_id)
);
CREATE INDEX inbox_received_at ON inbox (received_at);
CREATE INDEX inbox_tenant_received_at ON inbox (tenant_id, received_at);

-- Same event key, different content: the original stays in the inbox, the
-- newcomer is kept here for an operator.
CREATE TABLE inbox_conflicts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    inbox_id    bigint NOT NULL REFERENCES inbox (id),
    received_at timestamptz NOT NULL DEFAULT now(),
    body_sha256 bytea NOT NULL,
    body        bytea NOT NULL
);
CREATE INDEX inbox_conflicts_received_at ON inbox_conflicts (received_at);

-- The outbox: what must reach Kafka. Rows are kept for a retention window
-- after the relay confirmed them so a lost slot can be rebuilt by resync.
-- payload is NULL when the body travels by claim (inbox_id).
CREATE TABLE outbox (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    topic      text NOT NULL,
    key        bytea NOT NULL,
    headers    jsonb NOT NULL,
    payload    bytea,
    inbox_id   bigint
);
CREATE INDEX outbox_created_at ON outbox (created_at);

-- Effects. One grant per business key, however many events mention it.
CREATE TABLE credit_grants (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      uuid NOT NULL,
    workspace_id   uuid NOT NULL REFERENCES workspaces (id),
    source_id      uuid NOT NULL,
    source_account text NOT NULL,
    object_id      text NOT NULL,
    operation      text NOT NULL,
    credits        bigint NOT NULL,
    event_id       text NOT NULL,
    inbox_id       bigint,
    processed_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT credit_grants_business_key UNIQUE (source_id, source_account, object_id, operation)
);
CREATE INDEX credit_grants_processed_at ON credit_grants (processed_at);

CREATE TABLE balances (
    workspace_id uuid PRIMARY KEY REFERENCES workspaces (id),
    tenant_id    uuid NOT NULL,
    credits      bigint NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Records a consumer could not apply, kept with their Kafka coordinates.
CREATE TABLE dead_letters (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    consumer_group   text NOT NULL,
    topic            text NOT NULL,
    partition        int NOT NULL,
    "offset"         bigint NOT NULL,
    key              bytea,
    headers          jsonb NOT NULL,
    payload          bytea,
    reason           text NOT NULL,
    attempts         int NOT NULL,
    first_failed_at  timestamptz NOT NULL,
    last_failed_at   timestamptz NOT NULL,
    replayed_at      timestamptz,
    CONSTRAINT dead_letters_position UNIQUE (consumer_group, topic, partition, "offset")
);
CREATE INDEX dead_letters_last_failed_at ON dead_letters (last_failed_at);

-- Outbox rows the relay could not publish (Kafka refused them for good, or
-- they could not be read): kept with the reason so the stream moves on and
-- an operator can see and resync them.
CREATE TABLE cdc_parked (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    parked_at  timestamptz NOT NULL DEFAULT now(),
    slot       text NOT NULL,
    lsn        pg_lsn NOT NULL,
    topic      text,
    key        bytea,
    headers    jsonb,
    payload    bytea,
    reason     text NOT NULL
);
CREATE INDEX cdc_parked_parked_at ON cdc_parked (parked_at);

-- +goose Down
DROP TABLE cdc_parked, dead_letters, balances, credit_grants, outbox, inbox_conflicts, inbox,
    workspace_customers, workspaces, source_secrets, sources, tenants;
