-- The alerts about one feedback ($1 source, $2 account, $3 feedback id),
-- each by its business key: a probe of their feedback index (00023).
SELECT 'feedback', 'alert', operation,
       source_id::text || '/' || source_account || '/' || project_id || '/' || feedback_id || '/' || operation,
       event_id, inbox_id, '', 0, '', kafka_topic, kafka_partition, kafka_offset, processed_at
FROM feedback_alerts WHERE source_id = $1 AND source_account = $2 AND feedback_id = $3
