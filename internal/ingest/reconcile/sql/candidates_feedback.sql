-- Feedback Sluice heard of (an escalation, since $3) without its initial
-- alert.
SELECT i.object_id FROM inbox i
WHERE i.source_id = $1 AND i.event_type LIKE 'feedback.%' AND i.received_at >= $3 AND i.object_id <> ''
  AND NOT EXISTS (SELECT 1 FROM feedback_alerts a
                  WHERE a.source_id = i.source_id AND a.source_account = i.source_account
                    AND a.feedback_id = i.object_id AND a.operation = 'initial-alert')
