-- +goose Up
-- Tenants' own event types (issue 16): a runtime catalogue beside the
-- built-in schemas compiled into the binary (schemas/). internal/store/catalog
-- writes these tables; every ingest instance reads them through a short
-- cache, so a new type or version is seen within seconds.
--
-- A type belongs to one tenant and one source kind (or 'api', POST
-- /v1/events); its name never shadows a built-in type of that kind (checked
-- by internal/store/catalog against the binary's schemas, which the database
-- cannot know). Its resource type names the shared topic it publishes to
-- (<prefix>.tenant.<resource_type>) and the middle of its Kafka key; it is
-- fixed for the type's life, so one resource's events never change topic.
CREATE TABLE event_types (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id     uuid NOT NULL REFERENCES tenants (id),
    source_kind   text NOT NULL,
    event_type    text NOT NULL,
    resource_type text NOT NULL,
    -- deprecated: still validates and publishes (a sender never breaks),
    -- shown as such and left out of `list` unless asked.
    status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deprecated')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT event_types_name UNIQUE (tenant_id, source_kind, event_type)
);

-- Versions are immutable: a fix is a new version. The newest one is what
-- ingest validates with; the id is what compiled schemas are cached by and
-- what inbox.event_type_version_id names.
CREATE TABLE event_type_versions (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_type_id     bigint NOT NULL REFERENCES event_types (id) ON DELETE CASCADE,
    version           integer NOT NULL CHECK (version >= 1),
    schema            bytea NOT NULL,
    -- Where the object id and the event time are: a JSON pointer into the
    -- body, or header:<Name>; empty: where the source's kind puts them.
    object_id_at      text NOT NULL DEFAULT '',
    event_time_at     text NOT NULL DEFAULT '',
    event_time_format text NOT NULL DEFAULT '',
    -- compatible: it had to accept what the previous version accepted, and
    -- checked payloads were validated against it before it was stored.
    compatible        boolean NOT NULL,
    checked           integer NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT event_type_versions_version UNIQUE (event_type_id, version)
);

-- The tenant catalogue version that validated a published event (NULL for
-- built-in types and for events not published): what a compatible version
-- is checked against, and what a release records.
ALTER TABLE inbox ADD COLUMN event_type_version_id bigint;

-- +goose Down
ALTER TABLE inbox DROP COLUMN event_type_version_id;
DROP TABLE event_type_versions, event_types;
