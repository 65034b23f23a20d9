-- One reversal per business key; the e-mail intent is written only when the
-- reversal is new and there was a grant to reverse ($6 NULL: refunded
-- before any grant; the row still records the refund, which stops a later
-- grant). It returns what to take from which balance when the batch settles.
WITH r AS (
    INSERT INTO credit_reversals (tenant_id, source_id, source_account, object_id, operation,
                                  grant_id, workspace_id, credits, event_id, inbox_id,
                                  kafka_topic, kafka_partition, kafka_offset)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $15, $16, $17)
    ON CONFLICT ON CONSTRAINT credit_reversals_business_key DO NOTHING
    RETURNING workspace_id, credits
), intent AS (
    INSERT INTO outbox (topic, key, headers, payload)
    SELECT $11, $12, $13, $14 FROM r WHERE r.workspace_id IS NOT NULL
)
SELECT workspace_id, credits FROM r WHERE workspace_id IS NOT NULL
