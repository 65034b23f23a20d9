-- A body too large for Kafka, loaded from the inbox row the record names.
SELECT body FROM inbox WHERE id = $1 AND tenant_id = $2
