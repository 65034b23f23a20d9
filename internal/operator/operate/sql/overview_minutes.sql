-- Events accepted per minute and status over the overview's window (the
-- WHERE clause is added: received_at, and the tenant when scoped).
SELECT date_trunc('minute', i.received_at) AS minute, i.status, count(*) FROM inbox i
