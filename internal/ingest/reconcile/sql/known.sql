-- Which of a page's event ids the inbox holds for a source: a dry run's
-- "already have it". The source's account completes the event key, so the
-- unique index answers.
SELECT e FROM unnest($2::text[]) e
WHERE EXISTS (SELECT 1 FROM inbox i JOIN sources s ON s.id = i.source_id AND s.account = i.source_account
              WHERE i.source_id = $1 AND i.event_id = e)
