-- +goose Up
-- The admin API's Idempotency-Key (internal/operator/admin): a create sent
-- again by the same token with the same key is answered as the first was,
-- and makes nothing more. A row is claimed before the create runs
-- (completed_at NULL: in flight) and completed with the answer after it.
-- The request is kept as a salted SHA-256 only (it may hold a secret); an
-- answer holding a secret shown once is never kept, only the id it made
-- (resource_id). Kept a day: internal/store/lifecycle deletes rows past its
-- idempotency horizon (created_at).
CREATE TABLE admin_idempotency_keys (
    token_id       uuid NOT NULL REFERENCES admin_tokens (id) ON DELETE CASCADE,
    key            text NOT NULL,
    operation      text NOT NULL,
    salt           bytea NOT NULL,
    request_sha256 bytea NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    completed_at   timestamptz,
    status         integer,
    content_type   text,
    location       text,
    body           bytea,
    resource_id    text,
    PRIMARY KEY (token_id, key)
);
CREATE INDEX admin_idempotency_keys_created_at ON admin_idempotency_keys (created_at);

-- The audit trail filtered by token (GET /admin/v1/audit?token_id=).
CREATE INDEX admin_audit_token ON admin_audit (token_id, id);

-- +goose Down
DROP INDEX admin_audit_token;
DROP TABLE admin_idempotency_keys;
