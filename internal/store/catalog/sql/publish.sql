-- Publish released events: their outbox rows in acceptance order, their
-- inbox rows published under version $8 with resource type $9.
WITH r AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::text[], $5::bytea[], $6::jsonb[], $7::bytea[])
        AS t(inbox_id, object_id, event_time, topic, key, headers, payload)
), published AS (
    INSERT INTO outbox (topic, key, headers, payload, inbox_id)
    SELECT topic, key, headers, payload, inbox_id FROM r ORDER BY inbox_id
)
UPDATE inbox SET status = 'published', reason = '', object_type = $9, object_id = r.object_id,
                 event_time = coalesce(r.event_time, inbox.event_time), event_type_version_id = $8
FROM r WHERE inbox.id = r.inbox_id
