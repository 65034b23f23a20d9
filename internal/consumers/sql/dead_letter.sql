-- Keep a record that failed for good, and publish it to the group's
-- dead-letter topic through the outbox, in the batch's transaction. A record
-- already dead-lettered (a rewind met it again, or the relay published its
-- outbox row twice) is neither kept nor published twice.
WITH dl AS (
    INSERT INTO dead_letters (consumer_group, topic, partition, "offset", key, headers, payload,
                              reason, attempts, first_failed_at, last_failed_at, outbox_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $14)
    ON CONFLICT DO NOTHING
    RETURNING id
)
INSERT INTO outbox (topic, key, headers, payload)
SELECT $12, $5, $13, $7 FROM dl
