-- The comparator's own tables, beside River's (rivermigrate makes those):
-- what a team building the same service on River would keep. No operator
-- search indexes, partitions or delivery log: the design gets only what its
-- invariants need.

-- Sources and the workspaces their customers map to, seeded once.
CREATE TABLE sources (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    account text NOT NULL,
    secret text NOT NULL
);

CREATE TABLE workspace_customers (
    tenant_id uuid NOT NULL,
    customer_id text NOT NULL,
    workspace_id uuid NOT NULL DEFAULT gen_random_uuid(),
    PRIMARY KEY (tenant_id, customer_id)
);

-- One row per accepted event key, its body as received.
CREATE TABLE inbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id uuid NOT NULL,
    source_id uuid NOT NULL,
    source_account text NOT NULL,
    event_id text NOT NULL,
    event_type text NOT NULL,
    object_id text NOT NULL,
    received_at timestamptz NOT NULL,
    body_sha256 bytea NOT NULL,
    body bytea NOT NULL,
    CONSTRAINT inbox_event_key UNIQUE (source_id, source_account, event_id)
);

-- A delivery whose key was taken by other content: kept, never applied.
CREATE TABLE inbox_conflicts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    inbox_id bigint NOT NULL REFERENCES inbox (id),
    received_at timestamptz NOT NULL,
    body bytea NOT NULL
);

-- One grant per business key, however many events name the invoice.
CREATE TABLE credit_grants (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id uuid NOT NULL,
    workspace_id uuid NOT NULL,
    source_id uuid NOT NULL,
    source_account text NOT NULL,
    object_id text NOT NULL,
    operation text NOT NULL,
    credits bigint NOT NULL,
    event_id text NOT NULL,
    inbox_id bigint NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT credit_grants_business_key UNIQUE (source_id, source_account, object_id, operation)
);

CREATE TABLE balances (
    workspace_id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    credits bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- What must leave Postgres (the grant's confirmation e-mail), written in the
-- grant's transaction for a relay to publish.
CREATE TABLE outbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic text NOT NULL,
    key bytea NOT NULL,
    headers jsonb NOT NULL,
    payload bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
