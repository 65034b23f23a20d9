-- An automatic window's phase ended without a page to say so (the provider
-- has no such listing): the next phase begins at its start.
UPDATE reconcile_positions SET phase = $2, cursor = '', reached = NULL, updated_at = now() WHERE source_id = $1
