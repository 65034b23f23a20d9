-- A tenant's GitHub App installations ($1).
DELETE FROM github_installations WHERE tenant_id = $1
