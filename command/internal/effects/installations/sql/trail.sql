-- One GitHub App installation's projection ($1 source, $2 account, $3
-- installation id), with the event whose version it holds: a probe of its
-- primary key.
SELECT 'installations', 'projection', '', source_id::text || '/' || source_account || '/' || installation_id,
       version_event_id, version_inbox_id, '', 0, state, kafka_topic, kafka_partition, kafka_offset, processed_at
FROM github_installations WHERE source_id = $1 AND source_account = $2 AND installation_id = $3
