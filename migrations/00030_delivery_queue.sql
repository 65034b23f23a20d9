-- +goose Up
-- The deliverer's queue apart from the delivery record (docs/destinations.md,
-- "How the queue works").
--
-- One process owns an endpoint at a time (a session advisory lock) and
-- keeps its pending deliveries in memory, in order per resource key, so
-- nothing is claimed, leased, parked or promoted row by row. Postgres keeps
-- what must survive that process: the record of each delivery (written
-- once by the fan-out, its outcome a heap-only update, since no index
-- covers state, next_at or the figures any more) and pending_deliveries,
-- a narrow row per delivery still to send, which an owner taking the
-- endpoint over reads back in order. Fan-out inserts both; a delivered or
-- dead outcome deletes the narrow row in the statement that settles the
-- record.
CREATE TABLE pending_deliveries (
    endpoint_id uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    id          bigint NOT NULL,
    PRIMARY KEY (endpoint_id, id)
);
INSERT INTO pending_deliveries (endpoint_id, id) SELECT endpoint_id, id FROM deliveries WHERE state = 'pending';

-- Row-by-row claims are gone with their indexes: every outcome used to move
-- its row out of both (a new entry in every index of the table).
DROP INDEX deliveries_heads;
DROP INDEX deliveries_due;
ALTER TABLE deliveries DROP COLUMN leased_until;
-- The next pending deliveries of one key, for an owner that keeps only the
-- first few of each key in memory. Not partial: nothing in it changes after
-- the insert, so an outcome stays a heap-only update.
CREATE INDEX deliveries_key ON deliveries (endpoint_id, partition_key, id);
-- Room on every page for each row's outcome (one update, two after a
-- failure), so it is heap-only: at 80 a page filled with fresh rows had
-- room for about a quarter of their outcomes, and the rest put a new entry
-- in every index. Pages written from now on.
ALTER TABLE deliveries SET (fillfactor = 50);
-- The lifecycle's expiry by age reads blocks in creation order: a BRIN
-- range index costs the fan-out's insert next to nothing, where a btree
-- took an entry per delivery.
DROP INDEX deliveries_created;
CREATE INDEX deliveries_created ON deliveries USING brin (created_at);

-- +goose Down
DROP INDEX deliveries_created;
CREATE INDEX deliveries_created ON deliveries (created_at);
ALTER TABLE deliveries SET (fillfactor = 80);
DROP INDEX deliveries_key;
ALTER TABLE deliveries ADD COLUMN leased_until timestamptz;
CREATE INDEX deliveries_heads ON deliveries (endpoint_id, partition_key, id) WHERE state = 'pending';
CREATE INDEX deliveries_due ON deliveries (endpoint_id, next_at) WHERE state = 'pending';
DROP TABLE pending_deliveries;
