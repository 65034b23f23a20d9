-- A new version of type $1; a new version makes a deprecated type active.
WITH v AS (
    INSERT INTO event_type_versions (event_type_id, version, schema, object_id_at, event_time_at,
                                     event_time_format, compatible, checked)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    RETURNING id, created_at
), t AS (
    UPDATE event_types SET status = 'active', updated_at = now() WHERE id = $1
)
SELECT id, created_at FROM v
