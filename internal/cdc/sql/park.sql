INSERT INTO cdc_parked (slot, lsn, topic, key, headers, payload, reason)
VALUES ($1, $2::text::pg_lsn, $3, $4, $5, $6, $7)
