-- +goose Up
-- A source's API request budget, per clock hour, shared by every instance
-- that reconciles it: one row per source, taken from by one statement per
-- request (ingest/reconcile/sql/budget.sql).
CREATE TABLE reconcile_budgets (
    source_id uuid PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    hour      timestamptz NOT NULL,
    used      integer NOT NULL
);

-- +goose Down
DROP TABLE reconcile_budgets;
