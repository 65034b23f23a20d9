-- Move balances by a batch's net amounts ($1 workspaces in order, $2 the
-- amounts, $3 their tenants), in workspace order: every batch takes its row
-- locks in the same order, so batches of different partitions wait for
-- each other but never deadlock, and each lock is held only from here to
-- the commit.
INSERT INTO balances AS b (workspace_id, tenant_id, credits)
SELECT w::uuid, t::uuid, c FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS d(w, c, t, n) ORDER BY n
ON CONFLICT (workspace_id) DO UPDATE SET credits = b.credits + EXCLUDED.credits, updated_at = now()
