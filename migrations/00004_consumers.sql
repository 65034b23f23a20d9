-- +goose Up
-- Consumers' effects beyond the first grant: refunds, the ordered projections
-- (subscriptions, GitHub App installations, identity verifications), feedback
-- alerts and the dispatcher's log of sends. Each row says when it was
-- processed; each is guarded by a business key or a monotonic version.

-- A refund reverses an invoice's grant once: its own operation, its own
-- business key. credits is what was taken back (0 when the refund came
-- before any grant: the grant is then never made).
CREATE TABLE credit_reversals (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      uuid NOT NULL,
    source_id      uuid NOT NULL,
    source_account text NOT NULL,
    object_id      text NOT NULL,
    operation      text NOT NULL,
    grant_id       bigint REFERENCES credit_grants (id),
    workspace_id   uuid REFERENCES workspaces (id),
    credits        bigint NOT NULL,
    event_id       text NOT NULL,
    inbox_id       bigint,
    processed_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT credit_reversals_business_key UNIQUE (source_id, source_account, object_id, operation)
);
CREATE INDEX credit_reversals_processed_at ON credit_reversals (processed_at);

-- Whether an incoming projection version replaces the stored one. Versions
-- are (provider event time, event id): the id breaks ties between events of
-- the same time, byte-wise (COLLATE "C") so every replica and every replay
-- agrees. A final state outranks every non-final one, whatever its time, so a
-- late "pending" never undoes a decision; between two final states the
-- earlier one stands (a final state is terminal). Equal versions keep the
-- stored state. This is a total order, so any arrival order of the same
-- events ends in the same row.
-- +goose StatementBegin
CREATE FUNCTION sluice_supersedes(stored_final boolean, stored_time timestamptz, stored_id text,
                                  new_final boolean, new_time timestamptz, new_id text)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN stored_final AND new_final
            THEN (new_time, new_id COLLATE "C") < (stored_time, stored_id COLLATE "C")
        WHEN stored_final THEN false
        WHEN new_final THEN true
        ELSE (new_time, new_id COLLATE "C") > (stored_time, stored_id COLLATE "C")
    END
$$;
-- +goose StatementEnd

-- Stripe subscription state, from customer.subscription.* events.
CREATE TABLE subscriptions (
    source_id        uuid NOT NULL,
    source_account   text NOT NULL,
    subscription_id  text NOT NULL,
    tenant_id        uuid NOT NULL,
    customer_id      text NOT NULL DEFAULT '',
    status           text NOT NULL,
    final            boolean NOT NULL,
    version_time     timestamptz NOT NULL,
    version_event_id text NOT NULL,
    processed_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, source_account, subscription_id)
);
CREATE INDEX subscriptions_tenant_customer ON subscriptions (tenant_id, customer_id);
CREATE INDEX subscriptions_processed_at ON subscriptions (processed_at);

-- GitHub App installation state. A deleted installation is final: installing
-- the app again creates a new installation id, hence a new row for the account.
CREATE TABLE github_installations (
    source_id        uuid NOT NULL,
    source_account   text NOT NULL,
    installation_id  text NOT NULL,
    tenant_id        uuid NOT NULL,
    account_id       text NOT NULL DEFAULT '',
    account_login    text NOT NULL DEFAULT '',
    state            text NOT NULL CHECK (state IN ('active', 'suspended', 'deleted')),
    final            boolean NOT NULL,
    version_time     timestamptz NOT NULL,
    version_event_id text NOT NULL,
    processed_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, source_account, installation_id)
);
CREATE INDEX github_installations_tenant_account ON github_installations (tenant_id, account_id);
CREATE INDEX github_installations_processed_at ON github_installations (processed_at);

-- Identity verification state: pending -> in_review -> approved | rejected.
CREATE TABLE verifications (
    source_id        uuid NOT NULL,
    source_account   text NOT NULL,
    verification_id  text NOT NULL,
    tenant_id        uuid NOT NULL,
    status           text NOT NULL CHECK (status IN ('pending', 'in_review', 'approved', 'rejected')),
    final            boolean NOT NULL,
    version_time     timestamptz NOT NULL,
    version_event_id text NOT NULL,
    processed_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, source_account, verification_id)
);
-- Reconciliation looks for verifications stuck pending.
CREATE INDEX verifications_status_time ON verifications (status, version_time);
CREATE INDEX verifications_processed_at ON verifications (processed_at);

-- Feedback alerts: one row per operation (initial-alert, escalation-N) per
-- feedback; the alert intent is written to the outbox with the row.
CREATE TABLE feedback_alerts (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      uuid NOT NULL,
    source_id      uuid NOT NULL,
    source_account text NOT NULL,
    project_id     text NOT NULL,
    feedback_id    text NOT NULL,
    operation      text NOT NULL,
    event_id       text NOT NULL,
    inbox_id       bigint,
    processed_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT feedback_alerts_business_key UNIQUE (source_id, source_account, project_id, feedback_id, operation)
);
CREATE INDEX feedback_alerts_processed_at ON feedback_alerts (processed_at);

-- Second-hop sends the dispatcher made, keyed by idempotency key, written
-- only after the external service answered 2xx.
CREATE TABLE dispatch_log (
    idempotency_key text PRIMARY KEY,
    consumer_group  text NOT NULL,
    topic           text NOT NULL,
    partition       int NOT NULL,
    "offset"        bigint NOT NULL,
    status          int NOT NULL,
    sent_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dispatch_log_sent_at ON dispatch_log (sent_at);

-- +goose Down
DROP TABLE dispatch_log, feedback_alerts, verifications, github_installations, subscriptions, credit_reversals;
DROP FUNCTION sluice_supersedes;
