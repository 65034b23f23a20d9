-- The grants of a run of invoice.paid records, in one statement: one grant
-- per business key (the caller passes each key once), none for an invoice
-- already refunded ($8: the refund operation), nothing for a key granted
-- before. Rows go in business-key order, so concurrent batches take
-- unique-index locks in one order. It returns the ordinal of each input row
-- that made a new grant; only those get a balance change and an e-mail.
-- $11..$13 are the Kafka coordinates of each row's record (an event's
-- trail shows where the group applied it).
WITH input AS (
    SELECT *
    FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::bigint[],
                $11::text[], $12::int[], $13::bigint[])
        WITH ORDINALITY AS t(tenant_id, workspace_id, source_id, source_account, object_id, event_id, inbox_id,
                             kafka_topic, kafka_partition, kafka_offset, n)
), g AS (
    INSERT INTO credit_grants (tenant_id, workspace_id, source_id, source_account, object_id,
                               operation, credits, event_id, inbox_id, kafka_topic, kafka_partition, kafka_offset)
    SELECT tenant_id, workspace_id, source_id, source_account, object_id, $9, $10, event_id, inbox_id,
           kafka_topic, kafka_partition, kafka_offset
    FROM input
    -- One index probe per row (OFFSET 0 keeps this a per-row subplan): as
    -- a join, a plan cached while refunds were few could scan them all.
    WHERE NOT EXISTS (SELECT 1 FROM credit_reversals r
                      WHERE r.source_id = input.source_id AND r.source_account = input.source_account
                        AND r.object_id = input.object_id AND r.operation = $8
                      OFFSET 0)
    ORDER BY source_id, source_account, object_id
    ON CONFLICT ON CONSTRAINT credit_grants_business_key DO NOTHING
    RETURNING source_id, source_account, object_id
)
SELECT input.n FROM g JOIN input USING (source_id, source_account, object_id)
