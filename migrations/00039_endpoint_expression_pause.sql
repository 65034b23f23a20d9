-- +goose Up
-- An endpoint's filter expression (CEL over the event's envelope and body,
-- checked when it is set; NULL: every event of its types) and when it was
-- paused (NULL: not paused; its deliveries keep being written, none is sent
-- until it is resumed). Both nullable with no default: adding them rewrites
-- nothing, and a binary of the release before reads and writes endpoints
-- without them (docs/destinations.md).
ALTER TABLE endpoints ADD COLUMN filter_expression text;
ALTER TABLE endpoints ADD COLUMN paused_at timestamptz;

-- +goose Down
ALTER TABLE endpoints DROP COLUMN paused_at;
ALTER TABLE endpoints DROP COLUMN filter_expression;
