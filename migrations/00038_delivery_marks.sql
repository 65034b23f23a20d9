-- +goose NO TRANSACTION
-- +goose Up
-- Deliveries without a queue row (docs/destinations.md, "Isolation: why
-- delivery rows"). A delivery's life is now two row operations: the
-- fan-out's insert and the heap-only update of its outcome. The owner of an
-- endpoint finds its pending deliveries in deliveries itself, in id order
-- from a low-water mark it keeps in delivery_marks: every delivery of the
-- endpoint below `low` is delivered or dead, except those named in the
-- row's exceptions (parked_ids, and per parked key every delivery of the
-- key from parked_from on: deliveries that wait long, behind a failing
-- head, so the mark does not stay behind them for the retry horizon), and
-- those a retry or a replay made pending again, each of which writes a
-- delivery_redos row (the range it moved) that the owner deletes once the
-- range holds nothing pending.
--
-- The previous release and this one coexist during a rolling upgrade:
--
-- * Every statement of the previous release works on this schema: nothing
--   it reads or writes is gone. pending_deliveries stays (the release after
--   this one drops it). deliveries_key is replaced by deliveries_endpoint
--   (endpoint_id, id, partition_key), which serves the old key reads too.
-- * An older deliverer finds work only through queue rows, so while one
--   runs every writer of this release writes them as well: the fan-out, a
--   retry and a replay insert queue rows, and an outcome deletes them,
--   exactly as before, whenever delivery_queue_rows.written is true. This
--   migration sets it when a deliverer (of any release) holds its presence
--   lock now; a deliverer of this release clears it once no older
--   deliverer has been seen for three refreshes (about 15 s), and sets it
--   again, then writes queue rows for every pending delivery, if an older
--   one appears later (a rollback, or an old process restarted mid-rollout).
-- * Deliverers of both releases share the endpoints out by the same advisory
--   locks, one owner per endpoint whatever its release: an older owner reads
--   the queue rows, an owner of this release scans deliveries from the mark
--   (the mark written here, or left behind by an older owner, is only
--   lower than it could be, which costs the next owner a longer scan) and
--   reads at takeover the queue rows below its mark (an older release's
--   retry writes no redo row).
-- * After the upgrade no process writes queue rows; those left point at
--   deliveries settled since and are removed with them by the lifecycle.
--
-- A rollback stops this release's processes last: they write the queue
-- rows an older deliverer needs once they see it (the Down section writes
-- them too).
--
-- Statements run one by one (CREATE INDEX CONCURRENTLY needs it, so the
-- fan-out's inserts are not blocked while the index builds); each is safe
-- to run again after an interrupted run.
CREATE TABLE IF NOT EXISTS delivery_marks (
    endpoint_id uuid PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
    -- Every delivery of the endpoint with a lower id is settled, but for
    -- the exceptions below and the ranges of delivery_redos.
    low         bigint NOT NULL,
    -- Pending deliveries below low: by id, and per key from an id on.
    parked_ids  bigint[] NOT NULL DEFAULT '{}',
    parked_keys text[] NOT NULL DEFAULT '{}',
    parked_from bigint[] NOT NULL DEFAULT '{}',
    -- Bumped by every write: an owner writes only over the version it read.
    version     bigint NOT NULL DEFAULT 1,
    updated_at  timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 50); -- one row per endpoint, rewritten every few seconds: heap-only

CREATE TABLE IF NOT EXISTS delivery_redos (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    -- The ids a retry (lo = hi) or a replay moved back to pending.
    lo          bigint NOT NULL,
    hi          bigint NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX CONCURRENTLY IF NOT EXISTS delivery_redos_endpoint ON delivery_redos (endpoint_id, id);

-- Each endpoint's attempts per minute (issue: the console's endpoint
-- health): written by the deliverer with the batched 2xx outcomes, from
-- figures it adds up in memory and writes for each endpoint at most every
-- few seconds, so the rollup costs a row operation per endpoint every few
-- seconds, not per delivery. Latency is of the attempts that got an
-- answer, counted in buckets by their upper bound (ms); le_inf counts
-- those above 10 s. 24 hours of an endpoint are 1,440 rows whatever its
-- volume. Kept 8 days by the deliverer.
CREATE TABLE IF NOT EXISTS delivery_minutes (
    endpoint_id    uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    minute         timestamptz NOT NULL,
    attempts       int NOT NULL DEFAULT 0,
    delivered      int NOT NULL DEFAULT 0,
    failed         int NOT NULL DEFAULT 0,
    answered       int NOT NULL DEFAULT 0,
    latency_ms_sum bigint NOT NULL DEFAULT 0,
    le_50          int NOT NULL DEFAULT 0,
    le_100         int NOT NULL DEFAULT 0,
    le_250         int NOT NULL DEFAULT 0,
    le_500         int NOT NULL DEFAULT 0,
    le_1000        int NOT NULL DEFAULT 0,
    le_2500        int NOT NULL DEFAULT 0,
    le_5000        int NOT NULL DEFAULT 0,
    le_10000       int NOT NULL DEFAULT 0,
    le_inf         int NOT NULL DEFAULT 0,
    PRIMARY KEY (endpoint_id, minute)
) WITH (fillfactor = 70); -- a minute's row is added to several times: heap-only

-- One row: whether queue rows are still written (while a deliverer of the
-- release before runs).
CREATE TABLE IF NOT EXISTS delivery_queue_rows (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    written    boolean NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO delivery_queue_rows (written)
SELECT EXISTS (
    SELECT 1 FROM pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 2
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND classid::bigint = hashtext('sluice.deliverers')::bigint & 4294967295
)
ON CONFLICT DO NOTHING;

-- An owner's reads, in id order per endpoint: from the mark at takeover,
-- the ranges the fan-out announces, and a busy key's next deliveries
-- (partition_key is a key column so a key's read filters in the index).
-- Nothing in it changes after the insert: an outcome stays heap-only.
DROP INDEX CONCURRENTLY IF EXISTS deliveries_endpoint;
CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_endpoint ON deliveries (endpoint_id, id, partition_key);
DROP INDEX CONCURRENTLY IF EXISTS deliveries_key;

-- Room on every page for each row's outcome, which makes the row longer
-- (delivered_at, last_status and latency_ms were NULL): at 50 a page
-- filled with fresh rows lacked room for the last one or two outcomes
-- unless a prune had come first (5-8% of them not heap-only). Pages
-- written from now on.
ALTER TABLE deliveries SET (fillfactor = 40);

-- Each endpoint's mark: below its oldest queued delivery (every pending
-- delivery has a queue row until now), or past its last delivery.
INSERT INTO delivery_marks (endpoint_id, low)
SELECT e.id, coalesce((SELECT min(p.id) FROM pending_deliveries p WHERE p.endpoint_id = e.id),
                      (SELECT max(d.id) + 1 FROM deliveries d WHERE d.endpoint_id = e.id), 0)
FROM endpoints e
ON CONFLICT DO NOTHING;

-- +goose Down
ALTER TABLE deliveries SET (fillfactor = 50);
-- The release before finds pending deliveries through queue rows only.
INSERT INTO pending_deliveries (endpoint_id, id)
SELECT endpoint_id, id FROM deliveries WHERE state = 'pending'
ON CONFLICT DO NOTHING;
DROP INDEX CONCURRENTLY IF EXISTS deliveries_key;
CREATE INDEX CONCURRENTLY deliveries_key ON deliveries (endpoint_id, partition_key, id);
DROP INDEX CONCURRENTLY IF EXISTS deliveries_endpoint;
DROP TABLE IF EXISTS delivery_queue_rows;
DROP TABLE IF EXISTS delivery_minutes;
DROP TABLE IF EXISTS delivery_redos;
DROP TABLE IF EXISTS delivery_marks;
