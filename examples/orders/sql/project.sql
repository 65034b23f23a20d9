-- The order's row, written only when this event's version supersedes the
-- stored one: greater (version, then the order Sluice accepted events in);
-- a cancelled order is final and outranks every version.
INSERT INTO orders AS o (tenant_id, order_id, status, total, version, inbox_id, event_id)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (tenant_id, order_id) DO UPDATE
    SET status = EXCLUDED.status, total = EXCLUDED.total, version = EXCLUDED.version,
        inbox_id = EXCLUDED.inbox_id, event_id = EXCLUDED.event_id
    WHERE (o.status = 'cancelled', o.version, o.inbox_id)
        < (EXCLUDED.status = 'cancelled', EXCLUDED.version, EXCLUDED.inbox_id)
