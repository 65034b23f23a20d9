-- +goose Up
-- A dead letter is one record, wherever Kafka holds it: the relay may
-- publish an outbox row twice (at least once, by design), and both copies of
-- a poison record used to be dead-lettered, at their two positions. The
-- outbox row a record was relayed from names it; records without one (not
-- relayed by Sluice) keep their Kafka position as their identity.
ALTER TABLE dead_letters ADD COLUMN outbox_id bigint;
CREATE UNIQUE INDEX dead_letters_outbox ON dead_letters (consumer_group, outbox_id) WHERE outbox_id IS NOT NULL;

-- +goose Down
DROP INDEX dead_letters_outbox;
ALTER TABLE dead_letters DROP COLUMN outbox_id;
