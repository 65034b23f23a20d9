-- Record a delivery the service acknowledged with a 2xx. A key already
-- recorded (two deliveries raced, a replay) changes nothing: the table is
-- partitioned by sent_at (migration 00016), so its primary key cannot say
-- "this key exists" across partitions and the view is asked instead;
-- ON CONFLICT covers two copies of an intent recorded in one batch.
INSERT INTO dispatch_deliveries (idempotency_key, consumer_group, topic, partition, "offset", status)
SELECT $1::text, $2::text, $3::text, $4::int, $5::bigint, $6::int
WHERE NOT EXISTS (SELECT 1 FROM dispatch_delivered WHERE idempotency_key = $1::text)
ON CONFLICT DO NOTHING
