-- Give claimed deliveries back uncounted, due again at $2: their event is
-- not visible to this connection yet.
UPDATE deliveries SET next_at = $2, leased_until = NULL, attempts = attempts - 1
WHERE id = ANY($1::bigint[]) AND state = 'pending'
