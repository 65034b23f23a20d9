-- One grant per business key, however many events mention the invoice; the
-- confirmation e-mail intent is written only when the grant is new, in the
-- batch's transaction. It returns the new grant (no row: nothing new), whose
-- credits the batch adds to the balance when it settles. An invoice already
-- refunded ($14: the refund operation) earns nothing: the refund came first,
-- and granting now would hand out refunded credits.
WITH g AS (
    INSERT INTO credit_grants (tenant_id, workspace_id, source_id, source_account, object_id,
                               operation, credits, event_id, inbox_id)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9
    WHERE NOT EXISTS (SELECT 1 FROM credit_reversals
                      WHERE source_id = $3 AND source_account = $4 AND object_id = $5 AND operation = $14)
    ON CONFLICT ON CONSTRAINT credit_grants_business_key DO NOTHING
    RETURNING workspace_id, credits
), intent AS (
    INSERT INTO outbox (topic, key, headers, payload)
    SELECT $10, $11, $12, $13 FROM g
)
SELECT workspace_id, credits FROM g
