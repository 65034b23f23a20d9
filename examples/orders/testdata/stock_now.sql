-- A stock row changed at once, in the transaction's own order.
UPDATE stock SET available = available + $3 WHERE tenant_id = $1 AND sku = $2
