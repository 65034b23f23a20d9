-- Claim a dead letter for replay in the replay's transaction: a concurrent
-- replay of the same row finds nothing to mark and applies nothing.
UPDATE dead_letters SET replayed_at = now() WHERE id = $1 AND replayed_at IS NULL RETURNING id
