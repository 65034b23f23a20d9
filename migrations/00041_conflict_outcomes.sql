-- +goose Up
-- What an operator made of a conflict (the same event key arriving with
-- other content): dismissed (the content that stands is right; the
-- newcomer was noise) or resolved (set right another way: the provider sent
-- it again under a new id, a reconciliation, a correction by hand), with a
-- note, who and when. A table of its own rather than columns of
-- inbox_conflicts, which is partitioned and written by ingest: nothing
-- locks or rewrites it, and a binary of the release before, which never
-- reads this table, runs beside it unchanged. A row names its conflict as
-- the conflict's id does (inbox_id, received_at).
CREATE TABLE IF NOT EXISTS conflict_outcomes (
    inbox_id    bigint NOT NULL,
    received_at timestamptz NOT NULL,
    outcome     text NOT NULL CHECK (outcome IN ('dismissed', 'resolved')),
    note        text NOT NULL DEFAULT '' CHECK (length(note) <= 2000),
    actor       text NOT NULL,
    decided_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (inbox_id, received_at)
);

-- +goose Down
DROP TABLE IF EXISTS conflict_outcomes;
