-- +goose Up
-- Operators of the admin API (/admin/v1 on the admin listener).

-- Bearer tokens, stored as the SHA-256 of a 256-bit random token: the token
-- is printed once and never kept. A token has a role (read: GET only;
-- operate: also acts) and, optionally, a tenant it is confined to.
CREATE TABLE admin_tokens (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         text NOT NULL DEFAULT '',
    role         text NOT NULL CHECK (role IN ('read', 'operate')),
    tenant_id    uuid REFERENCES tenants (id) ON DELETE CASCADE,
    token_sha256 bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    revoked_at   timestamptz,
    CONSTRAINT admin_tokens_token_sha256 UNIQUE (token_sha256)
);

-- The audit trail: every operate action and every read of a payload, with
-- the token that did it. Written in the transaction of the action where
-- there is one, so an action and its record commit together. No foreign
-- keys: the record outlives the token, the tenant and the target.
CREATE TABLE admin_audit (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT now(),
    token_id  uuid,
    action    text NOT NULL,
    resource  text NOT NULL,
    target_id text NOT NULL,
    tenant_id uuid,
    outcome   text NOT NULL
);
CREATE INDEX admin_audit_tenant ON admin_audit (tenant_id, id);

-- Per-tenant overrides of ingest's deployment-wide rate (--tenant-rate,
-- --tenant-burst). Ingest reads them with the source, so a change reaches
-- running instances within their source cache TTL (5 s).
CREATE TABLE tenant_limits (
    tenant_id  uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    rate       double precision NOT NULL CHECK (rate > 0),
    burst      integer NOT NULL CHECK (burst > 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE tenant_limits;
DROP TABLE admin_audit;
DROP TABLE admin_tokens;
