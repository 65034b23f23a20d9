-- A retry's records leave the waiting set in the retry's transaction:
-- applied, dead-lettered, or (set aside again after this) still waiting.
DELETE FROM consumer_waiting
WHERE consumer_group = $1 AND topic = $2 AND partition = $3 AND "offset" = ANY($4::bigint[])
