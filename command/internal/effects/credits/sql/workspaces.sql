-- The workspaces a batch's customers map to, each within its event's
-- tenant, by the ordinal of the (tenant, customer) asked; a customer with no
-- row maps to none.
--
-- One primary-key probe per customer asked (LIMIT 1 keeps the lateral
-- subquery from being flattened into a join): as a join, the generic plan a
-- prepared statement settles on reads and hashes all of workspace_customers
-- for every batch, however few customers it asks about.
SELECT k.n, c.workspace_id::text
FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS k(tenant_id, customer_id, n)
CROSS JOIN LATERAL (
    SELECT workspace_id FROM workspace_customers
    WHERE workspace_customers.tenant_id = k.tenant_id AND workspace_customers.customer_id = k.customer_id
    LIMIT 1
) c
