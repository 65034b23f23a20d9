-- Publish resolved waiting events: their outbox rows (in the order they were
-- accepted, after the rows of the batch that resolved them), their inbox
-- rows published with their object, their waiting rows gone.
WITH r AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[], $4::jsonb[]) AS t(inbox_id, object_id, key, headers)
), gone AS (
    DELETE FROM inbox_waiting w USING r WHERE w.inbox_id = r.inbox_id
    RETURNING w.inbox_id, w.topic, w.payload
), published AS (
    INSERT INTO outbox (topic, key, headers, payload, inbox_id)
    SELECT gone.topic, r.key, r.headers, gone.payload, r.inbox_id
    FROM gone JOIN r USING (inbox_id)
    ORDER BY r.inbox_id
)
UPDATE inbox SET status = 'published', reason = '', object_id = r.object_id
FROM r WHERE inbox.id = r.inbox_id
