-- The dispatcher's sends of the given idempotency keys (an effect's e-mail
-- or alert), with the notifications record that carried each.
SELECT idempotency_key, consumer_group, topic, partition, "offset", status, sent_at
FROM dispatch_delivered WHERE idempotency_key = ANY($1)
