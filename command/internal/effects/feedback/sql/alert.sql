-- One alert per business key (source, account, project, feedback id,
-- operation): a key alerted before records nothing, and its intent is not
-- emitted again.
INSERT INTO feedback_alerts (tenant_id, source_id, source_account, project_id, feedback_id, operation,
                             event_id, inbox_id, kafka_topic, kafka_partition, kafka_offset)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT ON CONSTRAINT feedback_alerts_business_key DO NOTHING
