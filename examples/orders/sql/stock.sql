-- A batch's net stock changes ($1 SKUs, $2 changes, $3 tenants), in the
-- order given (SKU, then tenant): batches lock stock rows in one order.
INSERT INTO stock AS s (tenant_id, sku, available)
SELECT t::uuid, k, d FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS c(k, d, t, n)
ORDER BY n
ON CONFLICT (tenant_id, sku) DO UPDATE SET available = s.available + EXCLUDED.available
