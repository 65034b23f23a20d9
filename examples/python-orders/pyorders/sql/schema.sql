-- The consumer's poison table, made at start when missing: records that
-- failed for good, with why, how often and when, for an operator to read
-- and replay. One row per record and consumer group, so a rewind that meets
-- a record again keeps one.
CREATE TABLE IF NOT EXISTS python_orders_dead_letters (
    consumer_group  text        NOT NULL,
    topic           text        NOT NULL,
    partition       int         NOT NULL,
    "offset"        bigint      NOT NULL,
    key             bytea,
    headers         jsonb       NOT NULL,
    payload         bytea,
    reason          text        NOT NULL,
    attempts        int         NOT NULL,
    first_failed_at timestamptz NOT NULL,
    last_failed_at  timestamptz NOT NULL,
    PRIMARY KEY (consumer_group, topic, partition, "offset")
)
