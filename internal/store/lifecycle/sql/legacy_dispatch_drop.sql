-- The dedup view without the replaced table, which then goes whole.
CREATE OR REPLACE VIEW dispatch_delivered AS
SELECT idempotency_key, consumer_group, topic, partition, "offset", status, sent_at FROM dispatch_deliveries;
DROP TABLE dispatch_log;
