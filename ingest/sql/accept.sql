-- Accept one delivery: the inbox row and, when the event is published, its
-- outbox row, in one statement. A second delivery of the same event key
-- inserts nothing and returns no row; the caller then tells a duplicate from
-- a conflict.
WITH ins AS (
    INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type,
                       object_type, object_id, event_time, status, reason, body_sha256, body)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
    ON CONFLICT ON CONSTRAINT inbox_event_key DO NOTHING
    RETURNING id
), published AS (
    INSERT INTO outbox (topic, key, headers, payload, inbox_id)
    SELECT $13::text, $14, $15, $16, ins.id FROM ins WHERE $13::text IS NOT NULL
)
SELECT id FROM ins
