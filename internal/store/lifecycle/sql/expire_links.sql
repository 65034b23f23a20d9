-- One batch of links recorded longer ago than the links horizon ($1). An
-- event that names its object through a link that is gone waits (inbox
-- status 'waiting') like one whose link never came, until a later event
-- links it again or reconciliation asks the provider for it
-- (ingest/reconcile/sql/candidates.sql). The index object_links_created_at
-- (00026) finds them.
WITH gone AS (
    DELETE FROM object_links WHERE (source_id, source_account, object_type, link_id) IN (
        SELECT source_id, source_account, object_type, link_id FROM object_links WHERE created_at < $1 LIMIT $2)
    RETURNING 1
)
SELECT count(*) FROM gone
