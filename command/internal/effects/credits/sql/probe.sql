-- Which of these workspaces' balance rows are free ($1 workspaces, $2 their
-- tenants, as effect.Counter asks), as (workspace, tenant): those it can
-- lock without waiting (a row locked by another transaction is skipped). A
-- workspace with no balance row yet is free: nothing can hold it but an
-- insert not yet committed, which the settle then waits for briefly.
WITH free AS MATERIALIZED (
    SELECT workspace_id FROM balances WHERE workspace_id = ANY($1::text[]::uuid[]) FOR UPDATE SKIP LOCKED
)
SELECT d.w, d.t FROM unnest($1::text[], $2::text[]) AS d(w, t)
WHERE d.w::uuid IN (SELECT workspace_id FROM free)
   OR NOT EXISTS (SELECT 1 FROM balances b WHERE b.workspace_id = d.w::uuid)
