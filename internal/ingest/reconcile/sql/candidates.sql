-- Objects of a source whose state the provider should decide, to fetch one
-- by one (for kinds whose API can fetch state; others stop at the first):
--  * verifications not final $2 after their last event (the provider
--    retries for 24 h, then gives up);
--  * feedback Sluice heard of (an escalation, since $3) without its initial
--    alert;
--  * GitHub installations whose stored version ties with another event of
--    theirs received since $3 (equal updated_at): arrival order decided
--    it, GitHub's state should;
--  * the payments named by events waiting for a link to their object (a
--    Stripe refund whose payment intent no invoice payment linked yet),
--    their first candidate id.
-- Read in pages, after the last id a page reached ($5).
-- Reads the consumers' projections and the inbox; writes nothing.
SELECT id FROM (
SELECT verification_id FROM verifications
WHERE source_id = $1 AND NOT final AND version_time < now() - $2::interval
UNION
SELECT i.object_id FROM inbox i
WHERE i.source_id = $1 AND i.event_type LIKE 'feedback.%' AND i.received_at >= $3 AND i.object_id <> ''
  AND NOT EXISTS (SELECT 1 FROM feedback_alerts a
                  WHERE a.source_id = i.source_id AND a.source_account = i.source_account
                    AND a.feedback_id = i.object_id AND a.operation = 'initial-alert')
UNION
SELECT g.installation_id FROM github_installations g
WHERE g.source_id = $1 AND NOT g.final
  AND EXISTS (SELECT 1 FROM inbox i
              WHERE i.source_id = g.source_id AND i.source_account = g.source_account
                AND i.object_id = g.installation_id AND i.event_time = g.version_time
                AND i.id IS DISTINCT FROM g.version_inbox_id AND i.received_at >= $3
                AND i.event_type LIKE 'installation.%')
UNION
SELECT w.via[1] FROM inbox_waiting w
WHERE w.source_id = $1 AND cardinality(w.via) > 0
) c (id) WHERE id > $5
ORDER BY 1
LIMIT $4
