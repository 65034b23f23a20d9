-- +goose Up
-- Records a consumer group set aside because what they need is held
-- elsewhere (a row locked by another transaction: an operator's UPDATE, a
-- long report), each with every later record of its key on its partition,
-- so the partition's other records are applied and its offset moves
-- (consumers/waiting.go). Written in the transaction that moved the offset
-- past them; deleted in the one that applies or dead-letters them. A
-- record is the Kafka record as it was consumed.
CREATE TABLE consumer_waiting (
    consumer_group text        NOT NULL,
    topic          text        NOT NULL,
    partition      integer     NOT NULL,
    "offset"       bigint      NOT NULL,
    key            bytea,
    headers        jsonb       NOT NULL,
    payload        bytea,
    record_time    timestamptz NOT NULL,
    reason         text        NOT NULL,
    -- Times it was set aside: once, and once more for each retry or
    -- consumption again that found it blocked and wrote its row (a retry
    -- finding every record still blocked writes nothing).
    attempts       integer     NOT NULL DEFAULT 1,
    waiting_since  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, partition, "offset")
);

-- +goose Down
DROP TABLE consumer_waiting;
