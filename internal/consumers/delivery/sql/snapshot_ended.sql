-- Whether every transaction running at snapshot $1 has ended.
SELECT coalesce(bool_and(pg_visible_in_snapshot(x, pg_current_snapshot())), true)
FROM pg_snapshot_xip($1::pg_snapshot) AS x
