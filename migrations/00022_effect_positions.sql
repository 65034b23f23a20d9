-- +goose Up
-- The Kafka record that caused each effect (issue 15): an event's trail
-- names the topic, partition and offset at which a consumer group applied
-- it. The consumer already holds those coordinates when it writes the
-- effect, so they ride in the same statement: no extra round trip, and no
-- write per relayed record (the relay never learns offsets in Postgres).
-- A projection row keeps the coordinates of the version it holds; an effect
-- row those of the record that made it (a rewind or a redelivery changes
-- nothing, so they stay the first application's). A replayed dead letter
-- keeps its original record's coordinates. Rows written before this
-- migration have none (NULL).
--
-- Nullable columns without a default: catalogue changes only, no rewrite.
ALTER TABLE credit_grants
    ADD COLUMN kafka_topic text, ADD COLUMN kafka_partition int, ADD COLUMN kafka_offset bigint;
ALTER TABLE credit_reversals
    ADD COLUMN kafka_topic text, ADD COLUMN kafka_partition int, ADD COLUMN kafka_offset bigint;
ALTER TABLE feedback_alerts
    ADD COLUMN kafka_topic text, ADD COLUMN kafka_partition int, ADD COLUMN kafka_offset bigint;
ALTER TABLE subscriptions
    ADD COLUMN kafka_topic text, ADD COLUMN kafka_partition int, ADD COLUMN kafka_offset bigint;
ALTER TABLE github_installations
    ADD COLUMN kafka_topic text, ADD COLUMN kafka_partition int, ADD COLUMN kafka_offset bigint;
ALTER TABLE verifications
    ADD COLUMN kafka_topic text, ADD COLUMN kafka_partition int, ADD COLUMN kafka_offset bigint;

-- +goose Down
ALTER TABLE verifications DROP COLUMN kafka_topic, DROP COLUMN kafka_partition, DROP COLUMN kafka_offset;
ALTER TABLE github_installations DROP COLUMN kafka_topic, DROP COLUMN kafka_partition, DROP COLUMN kafka_offset;
ALTER TABLE subscriptions DROP COLUMN kafka_topic, DROP COLUMN kafka_partition, DROP COLUMN kafka_offset;
ALTER TABLE feedback_alerts DROP COLUMN kafka_topic, DROP COLUMN kafka_partition, DROP COLUMN kafka_offset;
ALTER TABLE credit_reversals DROP COLUMN kafka_topic, DROP COLUMN kafka_partition, DROP COLUMN kafka_offset;
ALTER TABLE credit_grants DROP COLUMN kafka_topic, DROP COLUMN kafka_partition, DROP COLUMN kafka_offset;
