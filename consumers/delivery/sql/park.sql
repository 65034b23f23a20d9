-- Park deliveries that wait behind an earlier one of their key, so the due
-- scan reads them once, not at every claim: the head's outcome wakes the
-- next (promote.sql). A row changed since it was read (the head finished
-- and promoted it meanwhile) keeps its time: xmin is the compare.
UPDATE deliveries d
SET next_at = 'infinity'
FROM unnest($1::bigint[], $2::text[]) AS p(id, seen)
WHERE d.id = p.id AND d.xmin::text = p.seen AND d.state = 'pending'
