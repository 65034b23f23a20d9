-- An inbox row as a search returns it; the caller adds the filters (WHERE),
-- the order (received_at, id, newest first) and the limit.
SELECT i.id, i.tenant_id, i.source_id, i.source_account, i.event_id, i.event_type, i.object_type, i.object_id,
       i.event_time, i.received_at, i.status, i.reason, i.erased_at
FROM inbox i
