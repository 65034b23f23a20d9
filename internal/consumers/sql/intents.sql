-- A batch's intents in one statement and one round trip (COPY takes three:
-- column types, data, end), in the order given, so the relay publishes them
-- in that order.
INSERT INTO outbox (topic, key, headers, payload)
SELECT topic, key, headers, payload
FROM unnest($1::text[], $2::bytea[], $3::jsonb[], $4::bytea[]) WITH ORDINALITY AS t(topic, key, headers, payload, n)
ORDER BY n
