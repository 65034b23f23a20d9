-- Move balances by a batch's net amounts, in workspace order: every batch
-- takes its row locks in the same order, so batches of different partitions
-- wait for each other but never deadlock, and each lock is held only from
-- here to the commit.
INSERT INTO balances AS b (workspace_id, tenant_id, credits)
SELECT w, t, c FROM unnest($1::uuid[], $2::uuid[], $3::bigint[]) AS d(w, t, c) ORDER BY w
ON CONFLICT (workspace_id) DO UPDATE SET credits = b.credits + EXCLUDED.credits, updated_at = now()
