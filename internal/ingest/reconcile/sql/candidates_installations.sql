-- GitHub installations whose stored version ties with another event of
-- theirs received since $3 (equal updated_at): arrival order decided it,
-- GitHub's state should.
SELECT g.installation_id FROM github_installations g
WHERE g.source_id = $1 AND NOT g.final
  AND EXISTS (SELECT 1 FROM inbox i
              WHERE i.source_id = g.source_id AND i.source_account = g.source_account
                AND i.object_id = g.installation_id AND i.event_time = g.version_time
                AND i.id IS DISTINCT FROM g.version_inbox_id AND i.received_at >= $3
                AND i.event_type LIKE 'installation.%')
