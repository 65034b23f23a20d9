-- The session's token a link's use made.
UPDATE portal_links SET token_id = $2 WHERE id = $1
