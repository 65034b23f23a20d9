-- The projection without its version guard: the last event applied wins.
INSERT INTO orders AS o (tenant_id, order_id, status, total, version, inbox_id, event_id)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (tenant_id, order_id) DO UPDATE
    SET status = EXCLUDED.status, total = EXCLUDED.total, version = EXCLUDED.version,
        inbox_id = EXCLUDED.inbox_id, event_id = EXCLUDED.event_id
