-- The tenant of endpoint $1 if it is tenant $2's (NULL: any tenant's), its
-- row share-locked so it cannot be deleted under the replay (two replays
-- of one window queue on the deliveries' own row locks).
SELECT tenant_id::text FROM endpoints WHERE id = $1 AND tenant_id IS NOT NULL AND ($2::uuid IS NULL OR tenant_id = $2::uuid) FOR SHARE
