-- Record a delivery the service acknowledged with a 2xx. A second record of
-- the same key (two deliveries raced, a replay) changes nothing.
INSERT INTO dispatch_log (idempotency_key, consumer_group, topic, partition, "offset", status)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (idempotency_key) DO NOTHING
