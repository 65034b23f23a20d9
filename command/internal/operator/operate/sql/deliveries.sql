-- Every authenticated delivery attempt of one event, in order: the first
-- (its inbox row), duplicates and conflicts (delivery_log, 00002/00009).
SELECT received_at, outcome FROM delivery_log WHERE inbox_id = $1 ORDER BY received_at
