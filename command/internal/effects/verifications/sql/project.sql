-- Insert the verification, or replace the stored status only when the new
-- version supersedes it (sluice_supersedes_accepted, migration 00007: ties go
-- to the event Sluice accepted last).
INSERT INTO verifications AS v (source_id, source_account, verification_id, tenant_id, status, final,
                                version_time, version_event_id, version_inbox_id, kafka_topic, kafka_partition, kafka_offset)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (source_id, source_account, verification_id) DO UPDATE
    SET status = EXCLUDED.status, final = EXCLUDED.final, version_time = EXCLUDED.version_time,
        version_event_id = EXCLUDED.version_event_id, version_inbox_id = EXCLUDED.version_inbox_id, processed_at = now(),
        kafka_topic = EXCLUDED.kafka_topic, kafka_partition = EXCLUDED.kafka_partition, kafka_offset = EXCLUDED.kafka_offset
    WHERE sluice_supersedes_accepted(v.final, v.version_time, v.version_inbox_id,
                                     EXCLUDED.final, EXCLUDED.version_time, EXCLUDED.version_inbox_id)
