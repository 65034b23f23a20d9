-- Was this intent already delivered? Read outside any transaction, before
-- the call, so a rewind or a redelivery does not call the service again.
SELECT EXISTS (SELECT 1 FROM dispatch_log WHERE idempotency_key = $1)
