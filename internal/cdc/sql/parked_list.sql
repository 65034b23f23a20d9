-- Parked records, newest first; $1: include released ones.
SELECT id, parked_at, slot, lsn::text, coalesce(topic, ''), coalesce(headers->>'ce_id', ''),
       coalesce(headers->>'sluice_outboxid', ''), reason, released_at
FROM cdc_parked
WHERE $1 OR released_at IS NULL
ORDER BY id DESC
LIMIT $2
