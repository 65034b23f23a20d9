-- Insert the subscription, or replace the stored state only when the new
-- version supersedes it (newer, or final over non-final; ties go to the
-- event Sluice accepted last: sluice_supersedes_accepted, migration 00007).
-- Equal versions keep the stored row.
INSERT INTO subscriptions AS s (source_id, source_account, subscription_id, tenant_id, customer_id, status,
                                final, version_time, version_event_id, version_inbox_id,
                                kafka_topic, kafka_partition, kafka_offset)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (source_id, source_account, subscription_id) DO UPDATE
    SET customer_id = EXCLUDED.customer_id, status = EXCLUDED.status, final = EXCLUDED.final,
        version_time = EXCLUDED.version_time, version_event_id = EXCLUDED.version_event_id, version_inbox_id = EXCLUDED.version_inbox_id, processed_at = now(),
        kafka_topic = EXCLUDED.kafka_topic, kafka_partition = EXCLUDED.kafka_partition, kafka_offset = EXCLUDED.kafka_offset
    WHERE sluice_supersedes_accepted(s.final, s.version_time, s.version_inbox_id,
                                     EXCLUDED.final, EXCLUDED.version_time, EXCLUDED.version_inbox_id)
