-- The rows of one tenant ($1) in the tables migration 00009 replaced, while
-- they exist (they are read by delivery_log until the lifecycle drops them).
WITH c AS (
    DELETE FROM inbox_conflicts_v1 c USING inbox i WHERE c.inbox_id = i.id AND i.tenant_id = $1
)
DELETE FROM inbox_duplicates_v1 d USING inbox i WHERE d.inbox_id = i.id AND i.tenant_id = $1
