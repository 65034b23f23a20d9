-- Which stock rows of ($1 SKUs, $2 tenants) can be locked without waiting,
-- or do not exist yet.
WITH want AS (SELECT k, t::uuid AS t FROM unnest($1::text[], $2::text[]) AS w(k, t)),
free AS MATERIALIZED (
    SELECT s.sku, s.tenant_id FROM stock s JOIN want ON s.sku = want.k AND s.tenant_id = want.t
    FOR UPDATE OF s SKIP LOCKED
)
SELECT k, t::text FROM want
WHERE (k, t) IN (SELECT sku, tenant_id FROM free)
   OR NOT EXISTS (SELECT 1 FROM stock s WHERE s.sku = want.k AND s.tenant_id = want.t)
