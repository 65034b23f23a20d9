-- The effects on one object of one source account ($1 source, $2 account,
-- $3 object id), whichever event caused them, each by its business key,
-- with the Kafka record that caused it (00022; NULL for older rows). Every
-- lookup is a probe of the table's business key or primary key (feedback
-- alerts: their feedback index, 00023), so a trail costs the same at any
-- volume. The group is its name without the deployment's topic prefix.
SELECT 'credits', 'grant', operation, source_id::text || '/' || source_account || '/' || object_id || '/' || operation,
       event_id, inbox_id, coalesce(workspace_id::text, ''), credits, '', kafka_topic, kafka_partition, kafka_offset, processed_at
FROM credit_grants WHERE source_id = $1 AND source_account = $2 AND object_id = $3
UNION ALL
SELECT 'credits', 'reversal', operation, source_id::text || '/' || source_account || '/' || object_id || '/' || operation,
       event_id, inbox_id, coalesce(workspace_id::text, ''), -credits, '', kafka_topic, kafka_partition, kafka_offset, processed_at
FROM credit_reversals WHERE source_id = $1 AND source_account = $2 AND object_id = $3
UNION ALL
SELECT 'feedback', 'alert', operation,
       source_id::text || '/' || source_account || '/' || project_id || '/' || feedback_id || '/' || operation,
       event_id, inbox_id, '', 0, '', kafka_topic, kafka_partition, kafka_offset, processed_at
FROM feedback_alerts WHERE source_id = $1 AND source_account = $2 AND feedback_id = $3
UNION ALL
SELECT 'subscriptions', 'projection', '', source_id::text || '/' || source_account || '/' || subscription_id,
       version_event_id, version_inbox_id, '', 0, status, kafka_topic, kafka_partition, kafka_offset, processed_at
FROM subscriptions WHERE source_id = $1 AND source_account = $2 AND subscription_id = $3
UNION ALL
SELECT 'installations', 'projection', '', source_id::text || '/' || source_account || '/' || installation_id,
       version_event_id, version_inbox_id, '', 0, state, kafka_topic, kafka_partition, kafka_offset, processed_at
FROM github_installations WHERE source_id = $1 AND source_account = $2 AND installation_id = $3
UNION ALL
SELECT 'verifications', 'projection', '', source_id::text || '/' || source_account || '/' || verification_id,
       version_event_id, version_inbox_id, '', 0, status, kafka_topic, kafka_partition, kafka_offset, processed_at
FROM verifications WHERE source_id = $1 AND source_account = $2 AND verification_id = $3
