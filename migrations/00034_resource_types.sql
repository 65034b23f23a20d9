-- +goose Up
-- The resource types of tenants' own event types, one shared topic each
-- (<prefix>.tenant.<name>), in one place every process reads: processes
-- that disagreed would create, read and accept different topics. The first
-- process of a deployment stores its list (internal/store/catalog,
-- SettleResourceTypes); `sluice eventtype resource-types add` adds one.
CREATE TABLE tenant_resource_types (
    name       text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9_]{0,47}$'),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE tenant_resource_types;
