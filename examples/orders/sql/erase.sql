-- A tenant's orders ($1), with their line operations and the tenant's
-- stock; the orders are what is counted.
WITH operations AS (
    DELETE FROM order_line_operations WHERE tenant_id = $1
), stock AS (
    DELETE FROM stock WHERE tenant_id = $1
)
DELETE FROM orders WHERE tenant_id = $1
