-- Was this intent already delivered? Read outside any transaction, before
-- the call, so a rewind or a redelivery does not call the service again.
-- dispatch_delivered also reads the table of before migration 00016 while
-- it holds sends within the key horizon.
SELECT EXISTS (SELECT 1 FROM dispatch_delivered WHERE idempotency_key = $1)
