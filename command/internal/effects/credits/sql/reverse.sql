-- One reversal per business key. It returns the workspace whose balance
-- the batch takes the grant back from, only when the reversal is new and
-- there was a grant to reverse ($6 NULL: refunded before any grant; the
-- row still records the refund, which stops a later grant); the caller
-- then emits the e-mail.
INSERT INTO credit_reversals (tenant_id, source_id, source_account, object_id, operation,
                              grant_id, workspace_id, credits, event_id, inbox_id,
                              kafka_topic, kafka_partition, kafka_offset)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT ON CONSTRAINT credit_reversals_business_key DO NOTHING
RETURNING workspace_id::text
