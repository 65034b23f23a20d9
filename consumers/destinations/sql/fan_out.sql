-- One delivery per (event, matching endpoint), in the batch's order: a
-- delivery's id is its place in its resource key's order. A row already
-- there (a rewind, a redelivery, a resync) changes nothing, so nothing
-- delivered is sent again. Every endpoint given work is woken once per
-- transaction (NOTIFY folds repeats of one payload).
WITH rows AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::bytea[], $7::text[],
                         $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::text[], $13::text[],
                         $14::text[], $15::int[], $16::bigint[], $17::timestamptz[])
        WITH ORDINALITY AS r(endpoint_id, tenant_id, webhook_id, partition_key, inbox_id, payload, event_id,
                             event_type, source, subject, event_time, traceparent, content_type,
                             topic, partition, "offset", accepted_at, n)
), inserted AS (
    INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, inbox_id, payload, event_id,
                            event_type, source, subject, event_time, traceparent, content_type,
                            topic, partition, "offset", accepted_at)
    SELECT endpoint_id, tenant_id, webhook_id, partition_key, inbox_id, payload, event_id,
           event_type, source, subject, event_time, traceparent, content_type,
           topic, partition, "offset", accepted_at
    FROM rows ORDER BY n
    ON CONFLICT (endpoint_id, webhook_id) DO NOTHING
    RETURNING endpoint_id
)
SELECT count(*) FROM (SELECT pg_notify('sluice_deliveries', endpoint_id::text) FROM (SELECT DISTINCT endpoint_id FROM inserted) e) n
