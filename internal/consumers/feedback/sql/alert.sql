-- One alert per business key (source, account, project, feedback id,
-- operation); the alert intent is written to the outbox only when the row is
-- new, in the batch's transaction.
WITH a AS (
    INSERT INTO feedback_alerts (tenant_id, source_id, source_account, project_id, feedback_id, operation,
                                 event_id, inbox_id, kafka_topic, kafka_partition, kafka_offset)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $13, $14, $15)
    ON CONFLICT ON CONSTRAINT feedback_alerts_business_key DO NOTHING
    RETURNING id
)
INSERT INTO outbox (topic, key, headers, payload)
SELECT $9, $10, $11, $12 FROM a
