-- The intents among $1 the dispatcher of before delivered itself (a 2xx
-- recorded in dispatch_deliveries, or in dispatch_log through the view,
-- within the key horizon): not handed to the deliverer again.
SELECT idempotency_key FROM dispatch_delivered WHERE idempotency_key = ANY($1::text[])
