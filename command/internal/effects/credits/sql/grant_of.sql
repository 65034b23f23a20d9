-- The grant a refund reverses, locked so the balance it moved cannot change
-- under the reversal.
SELECT id, workspace_id, credits FROM credit_grants
WHERE source_id = $1 AND source_account = $2 AND object_id = $3 AND operation = $4
FOR UPDATE
