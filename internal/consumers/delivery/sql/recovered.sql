UPDATE endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL
