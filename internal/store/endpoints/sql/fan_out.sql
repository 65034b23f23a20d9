-- One delivery per (event, matching endpoint), in the batch's order: a
-- delivery's id is its place in its resource key's order. A row already
-- there (a rewind, a redelivery, a resync) changes nothing, so nothing
-- delivered is sent again. The endpoint's owner finds the new rows by
-- their ids (no queue row: migration 00038) and is told, once per
-- transaction, the range of ids to read ("<endpoint> <lowest> <highest>",
-- sent at commit); a queue row is written besides only while a deliverer
-- of the release before runs.
--
-- The transaction takes its id before the rows take theirs: an owner
-- moving its endpoint's mark waits for the transactions running when it
-- proposed it, and one holding delivery ids must be among them.
WITH xact AS (
    SELECT pg_current_xact_id() AS xid
), rows AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::bytea[], $7::text[],
                         $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::text[], $13::text[],
                         $14::text[], $15::int[], $16::bigint[], $17::timestamptz[], $18::bigint[])
        WITH ORDINALITY AS r(endpoint_id, tenant_id, webhook_id, partition_key, inbox_id, payload, event_id,
                             event_type, source, subject, event_time, traceparent, content_type,
                             topic, partition, "offset", accepted_at, rules_version, n)
    WHERE (SELECT xid FROM xact) IS NOT NULL
), inserted AS (
    INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, inbox_id, payload, event_id,
                            event_type, source, subject, event_time, traceparent, content_type,
                            topic, partition, "offset", accepted_at, rules_version)
    SELECT endpoint_id, tenant_id, webhook_id, partition_key, inbox_id, payload, event_id,
           event_type, source, subject, event_time, traceparent, content_type,
           topic, partition, "offset", accepted_at, nullif(rules_version, 0)
    FROM rows ORDER BY n
    ON CONFLICT (endpoint_id, webhook_id) DO NOTHING
    RETURNING endpoint_id, id
), queued AS (
    INSERT INTO pending_deliveries (endpoint_id, id)
    SELECT endpoint_id, id FROM inserted WHERE (SELECT written FROM delivery_queue_rows WHERE singleton)
)
SELECT count(pg_notify('sluice_deliveries', endpoint_id::text || ' ' || lo || ' ' || hi))
FROM (SELECT endpoint_id, min(id) AS lo, max(id) AS hi FROM inserted GROUP BY endpoint_id) e
