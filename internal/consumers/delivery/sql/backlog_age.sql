-- How old the oldest pending delivery of endpoints $1 is, in seconds (0:
-- none waits): each endpoint's lowest queued id is its oldest, one probe of
-- the queue's primary key per endpoint.
SELECT coalesce(extract(epoch FROM now() - min(d.created_at)), 0)::float8
FROM unnest($1::uuid[]) AS e(id)
CROSS JOIN LATERAL (SELECT p.id FROM pending_deliveries p WHERE p.endpoint_id = e.id ORDER BY p.id LIMIT 1) p
JOIN deliveries d ON d.id = p.id
