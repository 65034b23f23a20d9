-- Queue rows on, whatever they were, with the snapshot of this statement:
-- a fan-out running at it may commit deliveries without queue rows.
WITH on_ AS (
    UPDATE delivery_queue_rows SET written = true, changed_at = now() WHERE singleton AND NOT written
)
SELECT pg_current_snapshot()::text
