-- Keep a record that failed for good, and publish it to the group's
-- dead-letter topic through the outbox, in the batch's transaction. A record
-- already dead-lettered (a rewind met it again) is not published twice.
WITH dl AS (
    INSERT INTO dead_letters (consumer_group, topic, partition, "offset", key, headers, payload,
                              reason, attempts, first_failed_at, last_failed_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
    ON CONFLICT ON CONSTRAINT dead_letters_position DO NOTHING
    RETURNING id
)
INSERT INTO outbox (topic, key, headers, payload)
SELECT $12, $5, $13, $7 FROM dl
