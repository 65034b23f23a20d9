-- The bodies of deliveries whose event has an inbox row, as received, for
-- each id asked: whether its row is there (and the tenant's: $2), and its
-- body while kept. A row not there yet, above the oldest kept, is a commit
-- the relay's stream showed before this connection sees it (a walsender
-- may send a commit before the committing backend is visible to others):
-- not gone. The inbox row is found by its id alone (the tenant is checked
-- after), so only its primary key serves, whatever plan is kept.
SELECT ids.id, i.id IS NOT NULL AND i.tenant_id = $2::uuid,
       CASE WHEN i.tenant_id = $2::uuid THEN coalesce(p.body, i.body) END,
       ids.id < coalesce((SELECT min(id) FROM inbox), 0)
FROM unnest($1::bigint[]) AS ids(id)
LEFT JOIN inbox i ON i.id = ids.id
LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
