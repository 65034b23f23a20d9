-- +goose Up
-- The relay's publication, made here by the schema's owner: CREATE
-- PUBLICATION needs ownership of its table, which the relay's own role
-- (REPLICATION, reading outbox) does not have and must not need. The relay
-- only checks that it is there. Only inserts are published: rows are
-- removed by retention, and those deletes must not become records. A
-- deployment whose relay created it before keeps it as it is.
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'sluice_outbox') THEN
        CREATE PUBLICATION sluice_outbox FOR TABLE outbox WITH (publish = 'insert');
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP PUBLICATION IF EXISTS sluice_outbox;
