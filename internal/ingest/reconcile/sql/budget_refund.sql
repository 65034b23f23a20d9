-- Give back a request the provider refused with 429: throttling is the
-- provider's limit, and waiting it out must not spend Sluice's own budget.
UPDATE reconcile_budgets SET used = used - 1 WHERE source_id = $1 AND hour = date_trunc('hour', now()) AND used > 0
