-- +goose Up
-- The browser console's sessions (internal/operator/console). A session is
-- found by the SHA-256 of its cookie's secret; it holds the admin token it
-- signed in with sealed (AES-GCM) under a key derived from that secret, so
-- the table alone opens nothing: only the browser holding the cookie can
-- have its token used. It ends at expires_at, which is never after its
-- token's expiry, when revoked (sign-out), and with its token: a look-up
-- joins admin_tokens and finds no session of a revoked or expired token
-- (and the token's row going takes its sessions with it).
CREATE TABLE console_sessions (
    id           bytea PRIMARY KEY,
    token_id     uuid NOT NULL REFERENCES admin_tokens (id) ON DELETE CASCADE,
    sealed_token bytea NOT NULL,
    csrf         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX console_sessions_token ON console_sessions (token_id);
CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
