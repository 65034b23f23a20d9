-- What the relay confirmed. A slot that predates cdc_slots is adopted here.
INSERT INTO cdc_slots (slot, created_lsn, confirmed_lsn, confirmed_time)
VALUES ($1, $2::text::pg_lsn, $2::text::pg_lsn, $3)
ON CONFLICT (slot) DO UPDATE SET
    confirmed_lsn = excluded.confirmed_lsn,
    confirmed_time = GREATEST(cdc_slots.confirmed_time, excluded.confirmed_time),
    updated_at = now()
