-- Set records aside (consumers/waiting.go), in the transaction that moves
-- the partition's offset past them. A record set aside before (a rewind, a
-- new owner of the partition consuming it again, or a retry that found it
-- still blocked) keeps one row: its first time waiting, its attempts.
INSERT INTO consumer_waiting AS w (consumer_group, topic, partition, "offset", key, headers, payload,
                                   record_time, reason, attempts, waiting_since)
SELECT $1, $2, $3, o, k, h::jsonb, p, t, r, a, s
FROM unnest($4::bigint[], $5::bytea[], $6::text[], $7::bytea[], $8::timestamptz[], $9::text[], $10::int[], $11::timestamptz[])
    AS x(o, k, h, p, t, r, a, s)
ON CONFLICT (consumer_group, topic, partition, "offset") DO UPDATE
SET reason = EXCLUDED.reason, attempts = w.attempts + 1
