-- The waiting events a link resolves now: this batch's own ($1, inbox ids)
-- and those waiting for an id this batch linked ($2), each with the object
-- its most preferred linked id points at, in the order they were accepted.
SELECT w.inbox_id, w.tenant_id::text, w.object_type, l.object_id, w.headers::text
FROM inbox_waiting w
CROSS JOIN LATERAL (
    SELECT l.object_id
    FROM unnest(w.via) WITH ORDINALITY AS v(link_id, n)
    JOIN object_links l ON l.source_id = w.source_id AND l.source_account = w.source_account
                       AND l.object_type = w.object_type AND l.link_id = v.link_id
    ORDER BY v.n
    LIMIT 1
) l
WHERE w.inbox_id = ANY($1::bigint[]) OR w.via && $2::text[]
ORDER BY w.inbox_id
