-- +goose Up
-- Dead letters and parked relay records are few (one per record that
-- failed for good), and each row's unique key is a dedup (a record met
-- again is not dead-lettered twice), so they are not partitioned: the
-- lifecycle manager deletes, in batches, those an operator resolved
-- (replayed; released) longer ago than the payload horizon, and never an
-- unresolved one. These partial indexes hold only resolved rows, so a pass
-- reads nothing of the others.
CREATE INDEX dead_letters_replayed_at ON dead_letters (replayed_at) WHERE replayed_at IS NOT NULL;

-- A parked record is released by an operator (`sluice cdc parked release`)
-- once handled: re-published by a resync, or judged not needed.
ALTER TABLE cdc_parked ADD COLUMN released_at timestamptz;
CREATE INDEX cdc_parked_released_at ON cdc_parked (released_at) WHERE released_at IS NOT NULL;

-- +goose Down
DROP INDEX cdc_parked_released_at;
ALTER TABLE cdc_parked DROP COLUMN released_at;
DROP INDEX dead_letters_replayed_at;
