-- Moves endpoint $1's mark from $2 (version $3) to at most $5, the
-- owner's proposal, once every transaction that was running at the
-- proposal's snapshot $4 has ended: a fan-out still running then may have
-- taken ids below $5, and only now is every delivery below it visible.
-- Every delivery of the endpoint below the new mark must be settled or
-- named by its exceptions: ids $6 and keys $7 from ids $8 on (what the
-- owner holds there). So the new mark stops at the first pending delivery
-- in [$2, $5) that they do not name (a late commit, an outcome whose write
-- failed). Exceptions the owner no longer names leave only after a check
-- that what they covered below $2 is settled; what is still pending there
-- is named again. The ids found pending come back for the owner to hold
-- (at most $9 of each kind). Ranges of ids are row comparisons so that
-- only deliveries_endpoint serves them, whatever plan is kept.
--
-- Returns whether the proposal was ripe, the mark written (NULL: none), its
-- version and the version read (another differs: a write the owner did
-- not make, so it reads the mark again), the snapshot of this statement
-- (the owner's next proposal's), and the ids to hold.
WITH ripe AS (
    SELECT $4::text IS NULL OR coalesce(bool_and(pg_visible_in_snapshot(x, pg_current_snapshot())), true) AS ok
    FROM pg_snapshot_xip(coalesce($4::text, '1:1:')::pg_snapshot) AS x
), cur AS (
    SELECT version, parked_ids, parked_keys, parked_from FROM delivery_marks WHERE endpoint_id = $1
), named AS (
    SELECT key, from_id FROM unnest($7::text[], $8::bigint[]) AS n(key, from_id)
), late AS (
    SELECT d.id FROM deliveries d
    WHERE (SELECT ok FROM ripe) AND (d.endpoint_id, d.id) >= ($1, $2) AND (d.endpoint_id, d.id) < ($1, $5)
      AND d.endpoint_id = $1 AND d.state = 'pending'
      AND d.id NOT IN (SELECT unnest($6::bigint[]))
      AND NOT EXISTS (SELECT 1 FROM named n WHERE n.key = d.partition_key AND d.id >= n.from_id)
    ORDER BY d.endpoint_id, d.id LIMIT $9
), kept AS (
    -- Ids named before and not now: pending still?
    SELECT d.id FROM deliveries d
    WHERE (SELECT ok FROM ripe) AND d.endpoint_id = $1 AND d.state = 'pending'
      AND d.id IN (SELECT unnest(parked_ids) FROM cur EXCEPT SELECT unnest($6::bigint[]))
    LIMIT $9
), reopen AS (
    -- Keys named before from lower than now (or not at all): their
    -- deliveries between the two, below the old mark, are checked.
    SELECT o.key, o.from_id AS lo, least(coalesce(n.from_id, $2), $2) AS hi
    FROM cur CROSS JOIN LATERAL unnest(cur.parked_keys, cur.parked_from) AS o(key, from_id)
    LEFT JOIN named n ON n.key = o.key
    WHERE (SELECT ok FROM ripe) AND (n.from_id IS NULL OR n.from_id > o.from_id)
), reopened AS (
    SELECT d.id, d.partition_key FROM reopen r CROSS JOIN LATERAL (
        SELECT d.id, d.partition_key FROM deliveries d
        WHERE d.endpoint_id = $1 AND d.partition_key = r.key AND d.id >= r.lo AND d.id < r.hi AND d.state = 'pending'
        ORDER BY d.id LIMIT $9
    ) d
), keys AS (
    SELECT key, min(from_id) AS from_id FROM (
        SELECT key, from_id FROM named
        UNION ALL
        SELECT partition_key, id FROM reopened
    ) k GROUP BY key
), moved AS (
    INSERT INTO delivery_marks AS m (endpoint_id, low, parked_ids, parked_keys, parked_from)
    SELECT $1, low, $6::bigint[] || ARRAY(SELECT id FROM kept),
           ARRAY(SELECT key FROM keys ORDER BY key), ARRAY(SELECT from_id FROM keys ORDER BY key)
    FROM (SELECT least($5, (SELECT min(id) FROM late)) AS low) l
    WHERE (SELECT ok FROM ripe) AND l.low > $2
    ON CONFLICT (endpoint_id) DO UPDATE
    SET low = excluded.low, parked_ids = excluded.parked_ids, parked_keys = excluded.parked_keys,
        parked_from = excluded.parked_from, version = m.version + 1, updated_at = now()
    WHERE m.version = $3
    RETURNING low, version
)
SELECT (SELECT ok FROM ripe), (SELECT low FROM moved), (SELECT version FROM moved),
       coalesce((SELECT version FROM cur), 0), pg_current_snapshot()::text,
       ARRAY(SELECT id FROM late UNION SELECT id FROM kept UNION SELECT id FROM reopened ORDER BY 1)
