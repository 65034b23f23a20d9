-- An operational event entered through the same door as a webhook: its
-- inbox row (the event key: the operational source, the endpoint, the
-- transition and its moment), its payload and its outbox row on the
-- destinations topic, in the caller's transaction, all or nothing. A key
-- written already inserts nothing (the transition was announced). With $12
-- set, only if that event (the streak's failing) was announced: a recovery
-- is told only of a failure that was.
WITH ins AS (
    INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, object_type, object_id,
                       event_time, status, body_sha256)
    SELECT $1::uuid, $2::uuid, $3, $4, $5, 'endpoint', $3, $6, 'published', $7
    WHERE $12::text IS NULL
       OR EXISTS (SELECT 1 FROM inbox WHERE source_id = $2::uuid AND source_account = $3 AND event_id = $12)
    ON CONFLICT ON CONSTRAINT inbox_event_key DO NOTHING
    RETURNING id, received_at
), payload AS (
    INSERT INTO inbox_payloads (inbox_id, received_at, body)
    SELECT id, received_at, $8 FROM ins
), published AS (
    INSERT INTO outbox (topic, key, headers, payload, inbox_id)
    SELECT $9, $10, $11::jsonb, $8, id FROM ins
)
SELECT count(*) > 0 FROM ins
