-- The partitions of a table, and whether one is half detached (a DETACH
-- ... CONCURRENTLY that was interrupted: finalized before it is dropped).
SELECT c.relname, i.inhdetachpending, pg_total_relation_size(c.oid), greatest(c.reltuples, 0)::bigint
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = $1::regclass
