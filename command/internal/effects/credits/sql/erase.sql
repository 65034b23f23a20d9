-- A tenant's credits ($1): its reversals and balances, and its grants, which
-- are what is counted. Foreign keys (a reversal's grant) are checked at the
-- statement's end, once all three are gone.
WITH reversals AS (
    DELETE FROM credit_reversals WHERE tenant_id = $1
), balances AS (
    DELETE FROM balances WHERE tenant_id = $1
)
DELETE FROM credit_grants WHERE tenant_id = $1
