-- An operation on an order line, once per business key.
INSERT INTO order_line_operations (business_key, tenant_id, order_id, line_id, sku, quantity, operation, event_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (business_key) DO NOTHING
