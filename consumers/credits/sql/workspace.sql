-- The workspace a provider customer maps to, within the event's tenant.
SELECT workspace_id FROM workspace_customers WHERE tenant_id = $1 AND customer_id = $2
