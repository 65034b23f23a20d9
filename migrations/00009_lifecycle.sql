-- +goose Up
-- Data lifecycle (issue 13): event keys and payloads are kept for two
-- horizons (internal/store/lifecycle), and the high-volume tables are
-- partitioned by time so what ages out is dropped whole instead of deleted
-- row by row.
--
-- Every statement here only changes the catalogue or creates empty tables:
-- no rewrite, no scan, so the start-up migration holds its locks for
-- milliseconds and ingest pauses no longer than that.
--
-- 1. The inbox keeps the event key: one narrow row per accepted event,
--    unique (source, account, event id), kept for the key horizon (default 30
--    days). It stays a plain table: a unique index on a partitioned table must
--    contain the partition key, so a time-partitioned inbox could not say
--    "this key exists" across partitions, and its id (sluice_inboxid, claims,
--    grants' inbox_id) stays the same number in the same table. Its content
--    identity is two hashes: of the exact bytes (body_sha256) and of the JSON
--    once parsed (json_sha256, canonical form in ingest/canonical.go), so a
--    redelivery is judged by the same rule after the body is gone.
--    Rows written before this migration keep their body here (legacy: read
--    through coalesce, cleared by the lifecycle manager once past the payload
--    horizon); new rows leave it NULL.
-- Every lock this migration needs, first, in an order no writer of the
-- previous version can close a cycle with: its accepting statement locks the
-- inbox, then inbox_duplicates; a conflict's insert locks inbox_conflicts,
-- then the inbox (its foreign key). Taken one by one as the statements below
-- come, they deadlocked with such writers under load (the upgrade test).
LOCK TABLE inbox_conflicts, inbox, inbox_duplicates IN ACCESS EXCLUSIVE MODE;

ALTER TABLE inbox ALTER COLUMN body DROP NOT NULL;
ALTER TABLE inbox ADD COLUMN json_sha256 bytea;
-- Set when the payload was purged on request (sluice erase), so a claim for
-- it is answered "erased", not "not found".
ALTER TABLE inbox ADD COLUMN erased_at timestamptz;

-- 2. Payloads, by time of receipt: kept for the payload horizon (default 7
--    days, never less than the topics' retention: claimed bodies are read
--    from here by consumers as long as Kafka can replay their records).
--    Readers find a payload from its inbox row's (id, received_at), which
--    prunes to one partition.
CREATE TABLE inbox_payloads (
    inbox_id    bigint NOT NULL,
    received_at timestamptz NOT NULL,
    body        bytea NOT NULL,
    PRIMARY KEY (inbox_id, received_at)
) PARTITION BY RANGE (received_at);

-- 3. The delivery records behind delivery_log (duplicates: key horizon) and
--    conflicts (they hold a body: payload horizon), partitioned the same way.
--    No identity column (PostgreSQL 15 does not give partitions the parent's
--    identity) and no id: nothing reads them by id. No foreign key to the
--    inbox either: keys are deleted after conflicts' partitions are dropped,
--    and a key-horizon delete would otherwise look every key up in them.
--    The tables they replace keep the rows written before this migration
--    (renamed *_v1, read by delivery_log) and are dropped whole by the
--    lifecycle manager once their newest row is past its horizon.
ALTER TABLE inbox_duplicates RENAME TO inbox_duplicates_v1;
ALTER TABLE inbox_conflicts RENAME TO inbox_conflicts_v1;
ALTER TABLE inbox_conflicts_v1 DROP CONSTRAINT IF EXISTS inbox_conflicts_inbox_id_fkey;

CREATE TABLE inbox_duplicates (
    inbox_id    bigint NOT NULL,
    received_at timestamptz NOT NULL
) PARTITION BY RANGE (received_at);
CREATE INDEX inbox_duplicates_by_inbox ON inbox_duplicates (inbox_id);

CREATE TABLE inbox_conflicts (
    inbox_id    bigint NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    body_sha256 bytea NOT NULL,
    body        bytea NOT NULL
) PARTITION BY RANGE (received_at);
CREATE INDEX inbox_conflicts_by_inbox ON inbox_conflicts (inbox_id);

CREATE OR REPLACE VIEW delivery_log AS
SELECT i.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id,
       CASE i.status WHEN 'published' THEN 'accepted' ELSE i.status END AS outcome, i.id AS inbox_id
FROM inbox i
UNION ALL
SELECT d.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id, 'duplicate', i.id
FROM (SELECT inbox_id, received_at FROM inbox_duplicates
      UNION ALL SELECT inbox_id, received_at FROM inbox_duplicates_v1) d
JOIN inbox i ON i.id = d.inbox_id
UNION ALL
SELECT c.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id, 'conflict', i.id
FROM (SELECT inbox_id, received_at FROM inbox_conflicts
      UNION ALL SELECT inbox_id, received_at FROM inbox_conflicts_v1) c
JOIN inbox i ON i.id = c.inbox_id;

-- The first partitions (a day each, from today to three days ahead), so
-- ingest can write before the lifecycle manager first runs; the manager
-- creates the next ones ahead of time in its own interval. Names carry the
-- bounds (UTC): <table>_p<from>_<to>, which is how the manager reads them.
-- +goose StatementBegin
DO $$
DECLARE
    t    text;
    day  timestamptz;
    name text;
BEGIN
    FOREACH t IN ARRAY ARRAY['inbox_payloads', 'inbox_duplicates', 'inbox_conflicts'] LOOP
        FOR n IN 0..3 LOOP
            day := date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + make_interval(days => n);
            name := format('%s_p%s_%s', t, to_char(day AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS'),
                           to_char((day + interval '1 day') AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS'));
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                           name, t, day, day + interval '1 day');
        END LOOP;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- Bodies still kept go back into their inbox rows; those past the payload
-- horizon are gone, so body stays nullable. Works until the lifecycle
-- manager dropped the *_v1 tables (then there is nothing to rename back).
UPDATE inbox i SET body = p.body FROM inbox_payloads p WHERE p.inbox_id = i.id AND p.received_at = i.received_at AND i.body IS NULL;
DROP VIEW delivery_log;
DROP TABLE inbox_conflicts, inbox_duplicates, inbox_payloads;
ALTER TABLE inbox_duplicates_v1 RENAME TO inbox_duplicates;
ALTER TABLE inbox_conflicts_v1 RENAME TO inbox_conflicts;
-- NOT VALID: conflicts of keys deleted past the key horizon may remain.
ALTER TABLE inbox_conflicts ADD CONSTRAINT inbox_conflicts_inbox_id_fkey
    FOREIGN KEY (inbox_id) REFERENCES inbox (id) NOT VALID;
ALTER TABLE inbox DROP COLUMN erased_at;
ALTER TABLE inbox DROP COLUMN json_sha256;
CREATE VIEW delivery_log AS
SELECT i.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id,
       CASE i.status WHEN 'published' THEN 'accepted' ELSE i.status END AS outcome, i.id AS inbox_id
FROM inbox i
UNION ALL
SELECT d.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id, 'duplicate', i.id
FROM inbox_duplicates d JOIN inbox i ON i.id = d.inbox_id
UNION ALL
SELECT c.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id, 'conflict', i.id
FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id;
