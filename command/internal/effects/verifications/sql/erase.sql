-- A tenant's identity verifications ($1).
DELETE FROM verifications WHERE tenant_id = $1
