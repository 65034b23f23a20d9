-- Park deliveries that wait behind an earlier one of their key, so the due
-- scan reads them once, not at every claim: the head's outcome wakes the
-- next (promote.sql), in its transaction and once more after its commit.
-- A row changed since it was read (the head finished and promoted it
-- meanwhile) keeps its time: xmin is the compare. A head finishing while
-- this runs, its first promote having looked before the row was written,
-- finds it with its second; a deliverer killed between the two leaves it to
-- unpark.sql.
UPDATE deliveries d
SET next_at = 'infinity'
FROM unnest($1::bigint[], $2::text[]) AS p(id, seen)
WHERE d.id = p.id AND d.xmin::text = p.seen AND d.state = 'pending'
