-- +goose Up
-- The dispatcher's record of acknowledged sends (one row per notification
-- intent, so as many as the effects that send one: about one per event at
-- the credits scenario's rate) moves to a table partitioned by sent_at,
-- dropped whole by the lifecycle manager past the key horizon like the
-- inbox's delivery records, instead of growing forever.
--
-- Its rows are a dedup: "was this intent delivered?" is asked before each
-- call, so a rewind or a duplicate relay does not call the service again.
-- That question must keep its answer for as long as the intent's record can
-- come back (the topic's retention, never longer than the payload horizon,
-- itself at most the key horizon): the key horizon keeps it.
--
-- A unique index on a partitioned table must contain the partition key, so
-- the key alone is no longer unique in the database. Exactness is kept by
-- the writer instead (consumers/dispatch/sql/log.sql inserts only when the
-- view below has no row of the key, and one partition's worker writes a
-- key's records in order); two rows of one key could only come from two
-- consumers racing on the same intent, and both then record the same
-- acknowledged send.
--
-- The old table keeps its name and rows, so dispatchers of the previous
-- version go on writing to it during a rolling upgrade (their
-- ON CONFLICT (idempotency_key) needs its unique key); dispatch_delivered
-- reads both. The lifecycle manager drops it, and takes it out of the view,
-- once its newest row is past the key horizon.
CREATE TABLE dispatch_deliveries (
    idempotency_key text NOT NULL,
    consumer_group  text NOT NULL,
    topic           text NOT NULL,
    partition       int NOT NULL,
    "offset"        bigint NOT NULL,
    status          int NOT NULL,
    sent_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (idempotency_key, sent_at)
) PARTITION BY RANGE (sent_at);

CREATE VIEW dispatch_delivered AS
SELECT idempotency_key, sent_at FROM dispatch_deliveries
UNION ALL
SELECT idempotency_key, sent_at FROM dispatch_log;

-- The first partitions, a day each from today to three days ahead, named
-- as the lifecycle manager names them (see 00009).
-- +goose StatementBegin
DO $$
DECLARE
    day  timestamptz;
BEGIN
    FOR n IN 0..3 LOOP
        day := date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + make_interval(days => n);
        EXECUTE format('CREATE TABLE %I PARTITION OF dispatch_deliveries FOR VALUES FROM (%L) TO (%L)',
                       format('dispatch_deliveries_p%s_%s', to_char(day AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS'),
                              to_char((day + interval '1 day') AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS')),
                       day, day + interval '1 day');
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- Sends recorded since go back into the old table, which the manager may
-- have dropped already.
CREATE TABLE IF NOT EXISTS dispatch_log (
    idempotency_key text PRIMARY KEY,
    consumer_group  text NOT NULL,
    topic           text NOT NULL,
    partition       int NOT NULL,
    "offset"        bigint NOT NULL,
    status          int NOT NULL,
    sent_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS dispatch_log_sent_at ON dispatch_log (sent_at);
INSERT INTO dispatch_log SELECT idempotency_key, consumer_group, topic, partition, "offset", status, sent_at
FROM dispatch_deliveries ON CONFLICT DO NOTHING;
DROP VIEW dispatch_delivered;
DROP TABLE dispatch_deliveries;
