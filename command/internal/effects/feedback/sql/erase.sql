-- A tenant's feedback alerts ($1).
DELETE FROM feedback_alerts WHERE tenant_id = $1
