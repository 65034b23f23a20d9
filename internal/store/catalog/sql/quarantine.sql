-- Released events that fail the type's schema: quarantined with the reason.
UPDATE inbox SET status = 'quarantined', reason = t.reason
FROM unnest($1::bigint[], $2::text[]) AS t(id, reason)
WHERE inbox.id = t.id
