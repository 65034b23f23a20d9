-- +goose Up
-- A deployment's own endpoint: the operator's service for the built-in
-- effects' intents (--dispatch-url), delivered like a tenant's endpoint
-- (docs/destinations.md, "The deployment's endpoint"). A row so that its
-- deliveries, their queue and their owner are every endpoint's; it belongs
-- to no tenant but to the deployment its topic prefix names (its id is
-- derived from it), its URL and secret come from the deployment's flags,
-- and the endpoints API never shows it.
ALTER TABLE endpoints ALTER COLUMN tenant_id DROP NOT NULL;
ALTER TABLE endpoints ADD COLUMN deployment text UNIQUE;
ALTER TABLE endpoints ADD CONSTRAINT endpoints_owner CHECK ((tenant_id IS NULL) = (deployment IS NOT NULL));

-- +goose Down
DELETE FROM endpoints WHERE tenant_id IS NULL;
ALTER TABLE endpoints DROP CONSTRAINT endpoints_owner;
ALTER TABLE endpoints DROP COLUMN deployment;
ALTER TABLE endpoints ALTER COLUMN tenant_id SET NOT NULL;
