-- +goose Up
-- What an endpoint's deliveries are sent to: target_kind NULL is an HTTP
-- endpoint (every endpoint before this release), 'rabbitmq' an AMQP 0-9-1
-- exchange, 'kafka' a topic of the tenant's own cluster. target_settings
-- holds the kind's settings beside the URL (exchange, routing key, topic,
-- TLS, SASL mechanism, CA); target_sealed the kind's credentials, sealed
-- with the key ring like the endpoint's secrets (target_key_id names the
-- key). Nullable with no default: adding them rewrites nothing, and a
-- binary of the release before reads and writes endpoints without them
-- (docs/destinations.md). The check is NOT VALID: every row holds NULL,
-- and new and changed rows are checked.
ALTER TABLE endpoints ADD COLUMN target_kind text;
ALTER TABLE endpoints ADD COLUMN target_settings jsonb;
ALTER TABLE endpoints ADD COLUMN target_key_id text;
ALTER TABLE endpoints ADD COLUMN target_sealed bytea;
ALTER TABLE endpoints ADD CONSTRAINT endpoints_target_kind CHECK (target_kind IN ('rabbitmq', 'kafka')) NOT VALID;

-- +goose Down
ALTER TABLE endpoints DROP CONSTRAINT endpoints_target_kind;
ALTER TABLE endpoints DROP COLUMN target_sealed;
ALTER TABLE endpoints DROP COLUMN target_key_id;
ALTER TABLE endpoints DROP COLUMN target_settings;
ALTER TABLE endpoints DROP COLUMN target_kind;
