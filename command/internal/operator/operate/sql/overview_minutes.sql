-- Events accepted per minute, tenant and status since $1, read tenant by
-- tenant through inbox_tenant_received_at (a btree): OFFSET 0 keeps the
-- planner from flattening the lateral into one scan by received_at, whose
-- BRIN index is lossy over the ranges vacuum has not summarized yet (on a
-- busy inbox, the newest ones: exactly the hour asked for), so that scan
-- rechecked the whole inbox. Every inbox row's tenant has a row in tenants
-- (its source references it). The caller runs it with bitmap scans and JIT
-- off (see minutes.go).
SELECT date_trunc('minute', i.received_at) AS minute, t.id, i.status, count(*)
FROM tenants t
CROSS JOIN LATERAL (SELECT received_at, status FROM inbox i
                    WHERE i.tenant_id = t.id AND i.received_at >= $1 OFFSET 0) i
GROUP BY 1, 2, 3
