-- The newcomer's body of one conflict.
SELECT body FROM inbox_conflicts WHERE inbox_id = $1 AND received_at = $2
