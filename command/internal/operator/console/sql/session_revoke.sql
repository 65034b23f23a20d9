-- Signing out: the session ends now (a second sign-out keeps the first time).
UPDATE console_sessions SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1
