-- One compact row per authenticated delivery attempt of a batch, duplicates
-- included: arrays in, one statement per transaction.
INSERT INTO delivery_attempts (received_at, tenant_id, source_id, source_account, event_id, outcome, inbox_id)
SELECT * FROM unnest($1::timestamptz[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::bigint[])
