-- Whether parked record $1 exists, and whether its id was ever issued
-- (identities are never reused: an issued id that is gone was released
-- and deleted by the lifecycle manager).
SELECT EXISTS (SELECT 1 FROM cdc_parked WHERE id = $1),
       $1 <= coalesce(pg_sequence_last_value(pg_get_serial_sequence('cdc_parked', 'id')::regclass), 0)
