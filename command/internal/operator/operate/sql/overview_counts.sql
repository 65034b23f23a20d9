-- The overview's counts for tenant $1 (NULL: every tenant) since $2: dead
-- letters pending (any age), conflicts and reconciliation corrections
-- since $2, endpoints failing now (a failure streak, or disabled as failing
-- or gone). Each table is small next to the inbox; every count is bounded
-- by an index on its time or pending state but the endpoints' (at most 50
-- per tenant).
SELECT
    (SELECT count(*) FROM dead_letters d
      WHERE d.replayed_at IS NULL AND ($1::uuid IS NULL OR d.headers->>'ce_tenantid' = $1::text)),
    (SELECT count(*) FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id
      WHERE c.received_at >= $2 AND ($1::uuid IS NULL OR i.tenant_id = $1::uuid)),
    (SELECT count(*) FROM reconcile_corrections rc JOIN sources s ON s.id = rc.source_id
      WHERE rc.at >= $2 AND ($1::uuid IS NULL OR s.tenant_id = $1::uuid)),
    (SELECT count(*) FROM endpoints e
      WHERE (e.failing_since IS NOT NULL OR e.disabled_reason IN ('failing', 'gone'))
        AND ($1::uuid IS NULL OR e.tenant_id = $1::uuid))
