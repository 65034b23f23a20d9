-- +goose Up
-- Portal links (command/internal/operator/portallink): an operator's backend
-- asks for a link that opens one tenant's view in a browser. A link is found
-- by the SHA-256 of its secret (the secret itself is never kept), is used at
-- most once (used_at set by the exchange that claims it), and expires unused
-- at expires_at. Its exchange makes the session's admin token (token_id):
-- scoped to the tenant, role read or operate by access, portal_scope set,
-- expiring within session_seconds (at most an hour). A link is deleted a day
-- after it expired (by the next minting, by the expires_at index): the
-- audit trail keeps its id and every use.
CREATE TABLE portal_links (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id       uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    scope           text NOT NULL CHECK (scope IN ('destinations', 'tenant')),
    access          text NOT NULL CHECK (access IN ('read', 'manage')),
    secret_sha256   bytea NOT NULL,
    session_seconds bigint NOT NULL CHECK (session_seconds BETWEEN 1 AND 3600),
    created_by      uuid REFERENCES admin_tokens (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    used_at         timestamptz,
    token_id        uuid REFERENCES admin_tokens (id) ON DELETE SET NULL,
    CONSTRAINT portal_links_secret_sha256 UNIQUE (secret_sha256)
);
CREATE INDEX portal_links_tenant ON portal_links (tenant_id);
CREATE INDEX portal_links_expires_at ON portal_links (expires_at);

-- The portal scope of a portal session's token (destinations or tenant);
-- NULL for every other token. Nullable with no default: adding it rewrites
-- nothing, and the release before reads admin_tokens without it (its
-- Authenticate refuses a portal token by its slk_ptl_ prefix, so a rollback
-- leaves no portal session with more than its scope).
ALTER TABLE admin_tokens ADD COLUMN portal_scope text;

-- +goose Down
ALTER TABLE admin_tokens DROP COLUMN portal_scope;
DROP TABLE portal_links;
