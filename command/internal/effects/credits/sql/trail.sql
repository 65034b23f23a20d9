-- The credits on one invoice ($1 source, $2 account, $3 invoice id): its
-- grant and its reversal, each by its business key, with the record that
-- caused it. Each is a probe of the table's business key.
SELECT 'credits', 'grant', operation, source_id::text || '/' || source_account || '/' || object_id || '/' || operation,
       event_id, inbox_id, coalesce(workspace_id::text, ''), credits, '', kafka_topic, kafka_partition, kafka_offset, processed_at
FROM credit_grants WHERE source_id = $1 AND source_account = $2 AND object_id = $3
UNION ALL
SELECT 'credits', 'reversal', operation, source_id::text || '/' || source_account || '/' || object_id || '/' || operation,
       event_id, inbox_id, coalesce(workspace_id::text, ''), -credits, '', kafka_topic, kafka_partition, kafka_offset, processed_at
FROM credit_reversals WHERE source_id = $1 AND source_account = $2 AND object_id = $3
