-- The delivery log without the replaced tables, which then go whole.
CREATE OR REPLACE VIEW delivery_log AS
SELECT i.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id,
       CASE i.status WHEN 'published' THEN 'accepted' ELSE i.status END AS outcome, i.id AS inbox_id
FROM inbox i
UNION ALL
SELECT d.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id, 'duplicate', i.id
FROM inbox_duplicates d JOIN inbox i ON i.id = d.inbox_id
UNION ALL
SELECT c.received_at, i.tenant_id, i.source_id, i.source_account, i.event_id, 'conflict', i.id
FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id;
DROP TABLE inbox_duplicates_v1, inbox_conflicts_v1;
