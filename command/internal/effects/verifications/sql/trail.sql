-- One identity verification's projection ($1 source, $2 account, $3
-- verification id), with the event whose version it holds: a probe of its
-- primary key.
SELECT 'verifications', 'projection', '', source_id::text || '/' || source_account || '/' || verification_id,
       version_event_id, version_inbox_id, '', 0, status, kafka_topic, kafka_partition, kafka_offset, processed_at
FROM verifications WHERE source_id = $1 AND source_account = $2 AND verification_id = $3
