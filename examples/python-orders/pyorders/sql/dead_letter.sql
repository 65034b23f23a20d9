-- A record that failed for good, kept in the batch's transaction with the
-- rest of its effects; met again (a rewind), it is kept once.
INSERT INTO python_orders_dead_letters (consumer_group, topic, partition, "offset", key, headers, payload,
                                        reason, attempts, first_failed_at, last_failed_at)
VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11)
ON CONFLICT DO NOTHING
