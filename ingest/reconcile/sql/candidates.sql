-- Objects of a source whose final webhook may never have come, to fetch
-- from the provider one by one (kinds whose API can only fetch state):
-- verifications not final $2 after their last event (the provider retries
-- for 24 h, then gives up), and feedback Sluice heard of (an escalation)
-- without its initial alert, announced since $3. Reads the consumers'
-- projections; writes nothing.
SELECT verification_id FROM verifications
WHERE source_id = $1 AND NOT final AND version_time < now() - $2::interval
UNION
SELECT i.object_id FROM inbox i
WHERE i.source_id = $1 AND i.event_type LIKE 'feedback.%' AND i.received_at >= $3 AND i.object_id <> ''
  AND NOT EXISTS (SELECT 1 FROM feedback_alerts a
                  WHERE a.source_id = i.source_id AND a.source_account = i.source_account
                    AND a.feedback_id = i.object_id AND a.operation = 'initial-alert')
ORDER BY 1
LIMIT $4
