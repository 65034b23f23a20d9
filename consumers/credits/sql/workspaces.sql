-- The workspaces a batch's customers map to, each within its event's
-- tenant, by the ordinal of the (tenant, customer) asked; a customer with no
-- row maps to none.
SELECT k.n, c.workspace_id::text
FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS k(tenant_id, customer_id, n)
JOIN workspace_customers c USING (tenant_id, customer_id)
