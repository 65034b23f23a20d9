-- +goose Up
-- Reconciliation at volume (issue 34): a run progresses page by page and an
-- outage's window converges across runs, whatever its size.
--
-- 1. Each run says how it ended (outcome), what it could not do (missing: a
--    permission the provider refused for an optional lookup), how far it got
--    (phase, cursor, reached) and whether it was the schedule's (automatic).
--    A refused run (no credentials, a window that cannot be) is a row too, so
--    its window may be unknown.
ALTER TABLE reconcile_runs
    ADD COLUMN automatic boolean NOT NULL DEFAULT false,
    ADD COLUMN outcome   text NOT NULL DEFAULT 'running',
    ADD COLUMN missing   text NOT NULL DEFAULT '',
    ADD COLUMN note      text NOT NULL DEFAULT '',
    ADD COLUMN pages     integer NOT NULL DEFAULT 0,
    ADD COLUMN requests  integer NOT NULL DEFAULT 0,
    ADD COLUMN phase     text NOT NULL DEFAULT '',
    ADD COLUMN reached   timestamptz,
    ALTER COLUMN since DROP NOT NULL,
    ALTER COLUMN until DROP NOT NULL;
UPDATE reconcile_runs SET outcome = CASE
    WHEN finished_at IS NULL THEN 'abandoned'
    WHEN error = '' THEN 'ok'
    WHEN error LIKE '%budget%' THEN 'budget'
    ELSE 'failed' END;
ALTER TABLE reconcile_runs ADD CONSTRAINT reconcile_runs_outcome_check
    CHECK (outcome IN ('running', 'ok', 'partial', 'budget', 'incomplete', 'interrupted', 'failed', 'refused', 'abandoned'));

-- 2. Where each source's automatic reconciliation stands: everything before
--    covered_until has been read to its end; the window in progress (since,
--    until), when there is one, resumes from its saved page (phase, cursor)
--    whichever run or process stopped in it. One row per source, written
--    after each page is committed.
CREATE TABLE reconcile_positions (
    source_id     uuid PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    covered_until timestamptz,
    since         timestamptz,
    until         timestamptz,
    phase         text NOT NULL DEFAULT '',
    cursor        text NOT NULL DEFAULT '',
    reached       timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK ((since IS NULL) = (until IS NULL))
);
-- What a source's first position is, taken from the runs before this
-- migration: the end of its last good run (never later than now: a run
-- with a future --until stored one).
INSERT INTO reconcile_positions (source_id, covered_until)
SELECT source_id, least(max(until), now()) FROM reconcile_runs
WHERE finished_at IS NOT NULL AND error = '' AND NOT dry_run
GROUP BY source_id;

-- 3. The budget a source's row was counted against, so status can say when
--    the next request is allowed.
ALTER TABLE reconcile_budgets ADD COLUMN budget integer;

-- +goose Down
ALTER TABLE reconcile_budgets DROP COLUMN budget;
DROP TABLE reconcile_positions;
DELETE FROM reconcile_runs WHERE since IS NULL OR until IS NULL;
ALTER TABLE reconcile_runs
    DROP CONSTRAINT reconcile_runs_outcome_check,
    DROP COLUMN automatic, DROP COLUMN outcome, DROP COLUMN missing, DROP COLUMN note, DROP COLUMN pages,
    DROP COLUMN requests, DROP COLUMN phase, DROP COLUMN reached,
    ALTER COLUMN since SET NOT NULL,
    ALTER COLUMN until SET NOT NULL;
