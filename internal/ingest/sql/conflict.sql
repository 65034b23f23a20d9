-- Same event key, different content: keep the newcomer beside the original.
INSERT INTO inbox_conflicts (inbox_id, received_at, body_sha256, body) VALUES ($1, $2, $3, $4)
