-- The duplicates of a batch: each attempt that stored nothing else leaves
-- its time beside the row it duplicated. Arrays in, one statement.
INSERT INTO inbox_duplicates (inbox_id, received_at)
SELECT * FROM unnest($1::bigint[], $2::timestamptz[])
