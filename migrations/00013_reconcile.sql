-- +goose Up
-- Reconciliation (issue 14): a source may hold credentials for its
-- provider's API, and every reconciliation run and what it corrected is
-- kept, so `sluice reconcile status` can say what was recovered, per source
-- and run, after the process that did it is gone.

-- One credential document per source (its kind's JSON: a Stripe restricted
-- key, a GitHub App id and private key...), sealed with the key ring like
-- signing secrets, with "api-credentials:" and the source id as additional
-- data, so a sealed credential cannot be passed off as a signing secret.
CREATE TABLE source_api_credentials (
    source_id  uuid PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    key_id     text NOT NULL,
    ciphertext bytea NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE reconcile_runs (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_id   uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    since       timestamptz NOT NULL,
    until       timestamptz NOT NULL,
    dry_run     boolean NOT NULL DEFAULT false,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    -- found: events or deliveries the provider listed; corrected: new inbox
    -- rows entered and redeliveries asked for.
    found       integer NOT NULL DEFAULT 0,
    corrected   integer NOT NULL DEFAULT 0,
    error       text NOT NULL DEFAULT ''
);
CREATE INDEX reconcile_runs_source ON reconcile_runs (source_id, started_at);

-- One row per correction: which event (its real or synthetic id) a run
-- entered or asked to have redelivered, with the inbox row it became.
CREATE TABLE reconcile_corrections (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id    bigint NOT NULL REFERENCES reconcile_runs (id) ON DELETE CASCADE,
    source_id uuid NOT NULL,
    event_id  text NOT NULL,
    outcome   text NOT NULL,
    inbox_id  bigint,
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reconcile_corrections_run ON reconcile_corrections (run_id);

-- +goose Down
DROP TABLE reconcile_corrections, reconcile_runs, source_api_credentials;
