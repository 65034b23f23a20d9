-- +goose Up
-- Source kinds are judged by the provider registry, not by the database
-- (issue 12: a provider is one folder). The registry is a value a build or a
-- test assembles at run time, which a CHECK constraint cannot know; every
-- way a source enters (internal/store/tenancy) looks its kind up in the
-- registry, and ingest answers a source of a kind it does not hold as
-- unknown (404).
ALTER TABLE sources DROP CONSTRAINT sources_kind_check;

-- +goose Down
-- Only the kinds shipped before the registry come back; a source of any
-- other kind makes this fail, rather than being deleted.
ALTER TABLE sources ADD CONSTRAINT sources_kind_check
    CHECK (kind IN ('stripe', 'github', 'standard_webhooks', 'hmac', 'api'));
