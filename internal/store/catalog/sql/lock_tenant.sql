-- Serialises a tenant's catalogue changes (the quota count and the next
-- version number are read under it); no row: no such tenant.
SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE
