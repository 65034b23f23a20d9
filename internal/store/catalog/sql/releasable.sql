-- The next events a release may publish ($1 tenant, $2 type, $3 kind): kept
-- unhandled or quarantined, after inbox id $4, at most $5, in acceptance
-- order, each row locked. Rows another release holds are skipped, and a row
-- another release published meanwhile no longer matches once locked, so
-- concurrent releases never publish one event twice. body is NULL when the
-- payload is gone (past its horizon, or erased).
SELECT i.id, i.source_id::text, i.source_account, i.event_id, i.object_id, i.event_time,
       coalesce(p.body, i.body)
FROM inbox i
JOIN sources s ON s.id = i.source_id
LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
WHERE i.tenant_id = $1 AND i.event_type = $2 AND s.kind = $3
  AND i.status IN ('unhandled', 'quarantined') AND i.id > $4
ORDER BY i.id
LIMIT $5
FOR UPDATE OF i SKIP LOCKED
