-- Conflicting deliveries (same event key, different content) with the
-- event they clashed with; the caller adds the filters (WHERE), the order
-- (received_at, newest first) and the limit. Conflicts are partitioned by
-- received_at, so a time range reads only its partitions.
-- What an operator made of it, if anything, comes with it.
SELECT c.inbox_id, c.received_at, c.body_sha256, i.tenant_id, i.source_id, i.event_id, i.event_type, i.received_at,
       o.outcome, o.note, o.actor, o.decided_at
FROM inbox_conflicts c
JOIN inbox i ON i.id = c.inbox_id
LEFT JOIN conflict_outcomes o ON o.inbox_id = c.inbox_id AND o.received_at = c.received_at
