-- Serialise, per source, the transactions that record links or keep waiting
-- events (links.go): of two such transactions, the later one's statements
-- run after the earlier committed, so a link and the event waiting for it
-- always meet. Sources come sorted, so two batches lock in one order.
SELECT count(pg_advisory_xact_lock(hashtextextended('sluice.links/' || s, 0)))
FROM unnest($1::text[]) AS s
