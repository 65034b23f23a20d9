-- Non-transactional, so it reaches the stream at once, behind everything
-- committed before it; its content is when it was written (unix microseconds).
SELECT pg_logical_emit_message(false, $1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text)
