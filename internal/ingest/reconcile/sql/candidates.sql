-- Objects of a source whose state the provider should decide, to fetch one
-- by one (for kinds whose API can fetch state; others stop at the first):
--  * the payments named by events waiting for a link to their object (a
--    Stripe refund whose payment intent no invoice payment linked yet),
--    their first candidate id;
--  * those the projections of the effect groups the deployment runs hold
--    in doubt (candidates_<group>.sql), joined below when the runner is
--    built: a deployment without the group never reads its tables.
-- Read in pages, after the last id a page reached ($5). The parameters are
-- typed once here ($1 source, $2 how long a non-final object may go without
-- an event, $3 the window's start), so a group's query may leave some out.
-- Reads the consumers' projections and the inbox; writes nothing.
WITH params (source_id, stale_after, since, page, after) AS (
    SELECT $1::uuid, $2::interval, $3::timestamptz, $4::int, $5::text
)
SELECT id FROM (
SELECT w.via[1] FROM inbox_waiting w
WHERE w.source_id = $1 AND cardinality(w.via) > 0
-- the running groups' candidates
) c (id) WHERE id > $5
ORDER BY 1
LIMIT $4
