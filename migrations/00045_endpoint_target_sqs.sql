-- +goose Up
-- An endpoint's target may be an SQS-compatible queue: target_kind 'sqs',
-- its settings (the region) in target_settings and its access key sealed in
-- target_sealed, as for rabbitmq and kafka (00042). The check is replaced
-- by a wider one in the same transaction, NOT VALID as before: every row
-- the narrower check let in passes the wider one, and new and changed rows
-- are checked.
ALTER TABLE endpoints DROP CONSTRAINT endpoints_target_kind;
ALTER TABLE endpoints ADD CONSTRAINT endpoints_target_kind CHECK (target_kind IN ('rabbitmq', 'kafka', 'sqs')) NOT VALID;

-- +goose Down
-- sqs endpoints are deleted first (docs/destinations.md): a binary of the
-- release before would send their deliveries as HTTP requests.
ALTER TABLE endpoints DROP CONSTRAINT endpoints_target_kind;
ALTER TABLE endpoints ADD CONSTRAINT endpoints_target_kind CHECK (target_kind IN ('rabbitmq', 'kafka')) NOT VALID;
