-- A queue row for every pending delivery, for a deliverer of the release
-- before, which finds its work through them only: each endpoint's from the
-- lowest of its mark, its exceptions and its retries' ranges (everything
-- pending is at or above it).
INSERT INTO pending_deliveries (endpoint_id, id)
SELECT d.endpoint_id, d.id
FROM endpoints e
LEFT JOIN delivery_marks m ON m.endpoint_id = e.id
CROSS JOIN LATERAL (
    SELECT least(coalesce(m.low, 0), (SELECT min(x) FROM unnest(m.parked_ids) x), (SELECT min(x) FROM unnest(m.parked_from) x),
                 (SELECT min(r.lo) FROM delivery_redos r WHERE r.endpoint_id = e.id)) AS lo
) f
CROSS JOIN LATERAL (
    SELECT d.endpoint_id, d.id FROM deliveries d
    WHERE (d.endpoint_id, d.id) >= (e.id, f.lo) AND d.endpoint_id = e.id AND d.state = 'pending'
) d
ON CONFLICT DO NOTHING
