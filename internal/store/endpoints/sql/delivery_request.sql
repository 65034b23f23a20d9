-- What delivery $1's request is rebuilt from, beside the delivery and its
-- endpoint: the event's CloudEvents attributes and its body, from the
-- inbox row (the tenant's, found by its id alone) or, for an event with
-- none, the delivery's own payload. The last column says whether a body
-- was looked for and found (false: gone past the payload horizon, or
-- erased).
SELECT d.source, d.subject, d.event_time, d.traceparent, d.content_type,
       CASE WHEN d.inbox_id IS NULL THEN d.payload ELSE b.body END
FROM deliveries d
LEFT JOIN LATERAL (
    SELECT coalesce(p.body, i.body) AS body
    FROM inbox i
    LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
    WHERE i.id = d.inbox_id AND i.tenant_id = d.tenant_id
) b ON true
WHERE d.id = $1
