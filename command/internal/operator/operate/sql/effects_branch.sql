-- One group's effects, its columns named and cast as Effect reads them; a
-- NULL (what the group does not keep) is '' or 0, or stays NULL for the
-- effect's Kafka record and processing time.
SELECT coalesce(e.grp::text, ''), coalesce(e.kind::text, ''), coalesce(e.operation::text, ''),
       coalesce(e.business_key::text, ''), coalesce(e.event_id::text, ''), e.inbox_id::bigint,
       coalesce(e.workspace_id::text, ''), coalesce(e.credits::bigint, 0), coalesce(e.state::text, ''),
       e.kafka_topic::text, e.kafka_partition::int, e.kafka_offset::bigint, e.processed_at::timestamptz
FROM (
-- the group's query
) AS e (grp, kind, operation, business_key, event_id, inbox_id, workspace_id, credits, state, kafka_topic,
        kafka_partition, kafka_offset, processed_at)
