-- Purge the payloads that mention a subject ($1, as its bytes appear in
-- the body), of one tenant ($2) or of all (NULL): bodies, conflicts holding
-- one, outbox rows carrying one (kept for resync), dead letters' copies, records
-- consumers set aside and
-- waiting events' outbox payloads; the deliveries to endpoints of the events
-- purged, or holding a body that mentions it, go with their attempts. Event
-- keys stay, with their hashes and
-- erased_at set, so a redelivery is still judged a duplicate and a claim
-- answers "erased". A full scan of the payloads kept: an operator's action.
WITH needle AS (
    SELECT convert_to($1::text, 'UTF8') AS b
), hit AS (
    SELECT i.id, i.received_at
    FROM inbox i
    LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
    WHERE ($2::uuid IS NULL OR i.tenant_id = $2::uuid)
      AND position((SELECT b FROM needle) IN coalesce(p.body, i.body)) > 0
), payloads AS (
    DELETE FROM inbox_payloads p USING hit WHERE p.inbox_id = hit.id AND p.received_at = hit.received_at
), marked AS (
    UPDATE inbox SET erased_at = now(), body = NULL FROM hit WHERE inbox.id = hit.id RETURNING 1
), conflicts AS (
    DELETE FROM inbox_conflicts c USING inbox i
    WHERE c.inbox_id = i.id AND ($2::uuid IS NULL OR i.tenant_id = $2::uuid)
      AND position((SELECT b FROM needle) IN c.body) > 0
    RETURNING 1
), relayed AS (
    DELETE FROM outbox o
    WHERE ($2::uuid IS NULL OR o.headers->>'ce_tenantid' = $2::text)
      AND position((SELECT b FROM needle) IN o.payload) > 0
    RETURNING 1
), waiting AS (
    UPDATE inbox_waiting w SET payload = NULL FROM hit WHERE w.inbox_id = hit.id
), set_aside AS (
    -- A record set aside then applies without its body, and dead-letters
    -- like any record whose payload was erased.
    UPDATE consumer_waiting SET payload = NULL
    WHERE ($2::uuid IS NULL OR headers->>'ce_tenantid' = $2::text)
      AND position((SELECT b FROM needle) IN payload) > 0
), dead AS (
    UPDATE dead_letters SET payload = NULL
    WHERE ($2::uuid IS NULL OR headers->>'ce_tenantid' = $2::text)
      AND position((SELECT b FROM needle) IN payload) > 0
    RETURNING 1
), sent AS (
    SELECT d.id, d.endpoint_id FROM deliveries d
    WHERE d.inbox_id IN (SELECT id FROM hit)
       OR (($2::uuid IS NULL OR d.tenant_id = $2::uuid) AND position((SELECT b FROM needle) IN d.payload) > 0)
), sent_attempts AS (
    DELETE FROM delivery_attempts a USING sent WHERE a.delivery_id = sent.id RETURNING 1
), sent_dequeued AS (
    DELETE FROM pending_deliveries p USING sent WHERE p.endpoint_id = sent.endpoint_id AND p.id = sent.id
), sent_gone AS (
    DELETE FROM deliveries d USING sent WHERE d.id = sent.id RETURNING 1
)
SELECT (SELECT count(*) FROM marked), (SELECT count(*) FROM conflicts),
       (SELECT count(*) FROM relayed), (SELECT count(*) FROM dead),
       (SELECT count(*) FROM sent_gone), (SELECT count(*) FROM sent_attempts)
