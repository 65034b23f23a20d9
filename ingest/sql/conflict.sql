-- Same event key, different content: keep the newcomer beside the original.
INSERT INTO inbox_conflicts (inbox_id, body_sha256, body) VALUES ($1, $2, $3)
