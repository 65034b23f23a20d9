-- One version's schema ($1 version id).
SELECT schema FROM event_type_versions WHERE id = $1
