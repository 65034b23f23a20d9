-- A batch's intents, in the order given (the relay publishes them in that
-- order): the Go runtime's own statement (internal/consumers/sql/intents.sql).
INSERT INTO outbox (topic, key, headers, payload)
SELECT topic, key, headers, payload
FROM unnest($1::text[], $2::bytea[], $3::jsonb[], $4::bytea[]) WITH ORDINALITY AS t(topic, key, headers, payload, n)
ORDER BY n
