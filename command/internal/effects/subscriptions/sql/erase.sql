-- A tenant's subscriptions ($1).
DELETE FROM subscriptions WHERE tenant_id = $1
