-- Offboarding: every row of one tenant ($1), in one statement (foreign keys
-- are checked at its end, once every row is gone): its events (keys,
-- payloads, delivery records, conflicts, waiting events, records a consumer set aside, links, outbox rows,
-- dead letters), its workspaces, sources (their secrets cascade), API keys,
-- event types (their versions cascade), its endpoints with their secrets,
-- deliveries and the deliveries' attempts, and the tenant itself. Its
-- effects and projections are the effect groups' to delete
-- (effect.Group.Erase), before this, in its transaction.
WITH keys AS (
    SELECT id, received_at FROM inbox WHERE tenant_id = $1
), payloads AS (
    DELETE FROM inbox_payloads p USING keys WHERE p.inbox_id = keys.id AND p.received_at = keys.received_at RETURNING 1
), conflicts AS (
    DELETE FROM inbox_conflicts c USING keys WHERE c.inbox_id = keys.id
), duplicates AS (
    DELETE FROM inbox_duplicates d USING keys WHERE d.inbox_id = keys.id
), waiting AS (
    DELETE FROM inbox_waiting WHERE tenant_id = $1
), links AS (
    DELETE FROM object_links l USING sources s WHERE s.id = l.source_id AND s.tenant_id = $1
), events AS (
    DELETE FROM inbox WHERE tenant_id = $1 RETURNING 1
), relayed AS (
    DELETE FROM outbox WHERE headers->>'ce_tenantid' = $1::text RETURNING 1
), dead AS (
    DELETE FROM dead_letters WHERE headers->>'ce_tenantid' = $1::text RETURNING 1
), set_aside AS (
    DELETE FROM consumer_waiting WHERE headers->>'ce_tenantid' = $1::text
), customers AS (
    DELETE FROM workspace_customers WHERE tenant_id = $1
), workspaces AS (
    DELETE FROM workspaces WHERE tenant_id = $1
), keys_api AS (
    DELETE FROM api_keys WHERE tenant_id = $1
), sources AS (
    DELETE FROM sources WHERE tenant_id = $1
), event_types AS (
    DELETE FROM event_types WHERE tenant_id = $1
), delivery_queue AS (
    DELETE FROM pending_deliveries p USING deliveries d WHERE d.id = p.id AND d.tenant_id = $1
), delivery_attempts AS (
    DELETE FROM delivery_attempts a USING deliveries d WHERE d.id = a.delivery_id AND d.tenant_id = $1 RETURNING 1
), deliveries AS (
    DELETE FROM deliveries WHERE tenant_id = $1 RETURNING 1
), endpoint_secrets AS (
    DELETE FROM endpoint_secrets k USING endpoints e WHERE e.id = k.endpoint_id AND e.tenant_id = $1
), endpoints AS (
    DELETE FROM endpoints WHERE tenant_id = $1 RETURNING 1
), tenant AS (
    DELETE FROM tenants WHERE id = $1 RETURNING 1
)
SELECT (SELECT count(*) FROM tenant), (SELECT count(*) FROM events), (SELECT count(*) FROM payloads),
       (SELECT count(*) FROM relayed), (SELECT count(*) FROM dead),
       (SELECT count(*) FROM endpoints), (SELECT count(*) FROM deliveries), (SELECT count(*) FROM delivery_attempts)
