-- Keep a new event that names its object only through a link: the ids that
-- may resolve it, and the outbox row to write once one does.
INSERT INTO inbox_waiting (inbox_id, tenant_id, source_id, source_account, object_type, via, topic, headers, payload)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)
