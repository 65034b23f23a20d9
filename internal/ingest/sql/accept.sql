-- Accept a batch of deliveries in ONE statement, committed on its own: an
-- inbox row (the event key) and its payload row per new event key and, for
-- each published one, its outbox row; for keys already taken, whether the
-- content is the same (a duplicate, whose attempt is recorded here too),
-- differs for sure (a conflict: the JSON hashes differ, or the stored body is
-- gone and the bytes differ), or may differ (the stored body comes back so
-- the caller can compare it as JSON; only for rows without a JSON hash).
--
-- Same content is the rule sameJSON applies, kept as hashes so it holds
-- after the payload's partition was dropped: same bytes, or both bodies JSON
-- with the same canonical hash (ingest/canonical.go).
--
-- The arrays are the batch, one element per delivery, no event key twice
-- (the caller classifies later copies itself). A row is returned per
-- delivery, except when a concurrent batch committed the same key while this
-- one ran: the caller looks such a key up afterwards. The outbox payload is
-- the body where $16 says it travels inline (sent once, not twice).
--
-- Inbox rows go in event-key order, so concurrent batches take unique-index
-- locks in one order and cannot deadlock; outbox rows go in arrival order
-- ($17), the order the relay then publishes them in. Inbox ids are drawn in
-- arrival order all the same (input is read in array order, which is arrival
-- order): the id is the order Sluice accepted events in, and consumers break
-- ties between equal versions with it.
WITH input AS (
    SELECT nextval('inbox_id_seq') AS id, *
    FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                $8::timestamptz[], $9::text[], $10::text[], $11::bytea[], $12::bytea[],
                $13::text[], $14::bytea[], $15::text[], $16::bool[], $17::int[], $18::timestamptz[],
                $20::bytea[], $21::bigint[])
        AS t(tenant_id, source_id, source_account, event_id, event_type, object_type, object_id,
             event_time, status, reason, body_sha256, body, topic, key, headers, inline, arrival, received_at,
             json_sha256, event_type_version_id)
), ins AS (
    INSERT INTO inbox (id, tenant_id, source_id, source_account, event_id, event_type, object_type, object_id,
                       event_time, received_at, status, reason, body_sha256, json_sha256, event_type_version_id)
    OVERRIDING SYSTEM VALUE
    SELECT id, tenant_id, source_id, source_account, event_id, event_type, object_type, object_id,
           event_time, received_at, status, reason, body_sha256, json_sha256, nullif(event_type_version_id, 0)
    FROM input
    ORDER BY source_id, source_account, event_id
    ON CONFLICT ON CONSTRAINT inbox_event_key DO NOTHING
    RETURNING id, source_id, source_account, event_id
), payloads AS (
    INSERT INTO inbox_payloads (inbox_id, received_at, body)
    SELECT ins.id, input.received_at, input.body
    FROM ins JOIN input USING (source_id, source_account, event_id)
), accepted AS (
    SELECT input.arrival, ins.id, input.topic, input.key, input.headers,
           CASE WHEN input.inline THEN input.body END AS payload
    FROM ins JOIN input USING (source_id, source_account, event_id)
), published AS (
    INSERT INTO outbox (topic, key, headers, payload, inbox_id)
    SELECT topic, key, headers::jsonb, payload, id FROM accepted
    WHERE topic IS NOT NULL
    ORDER BY arrival
), taken AS (
    -- Keys in the inbox before this statement began (its snapshot does not
    -- include the rows ins just wrote). One probe of the event key's unique
    -- index per delivery, with the whole key, under any statistics: the
    -- LIMIT keeps the planner from making this a join, the committers'
    -- connections plan no scan where an index serves (pg.ConnectCommitter),
    -- and the only other index on event_id is one of another collation
    -- (migrations/00037). The stored body is read only when the hashes
    -- cannot decide.
    SELECT input.arrival, input.received_at, i.id,
           CASE WHEN i.body_sha256 = input.body_sha256 OR i.json_sha256 = input.json_sha256 THEN 'duplicate'
                WHEN i.json_sha256 IS NOT NULL AND input.json_sha256 IS NOT NULL THEN 'conflict'
                ELSE 'differs' END AS kind,
           i.received_at AS stored_at, i.body AS legacy_body
    FROM input
    CROSS JOIN LATERAL (
        SELECT id, received_at, body_sha256, json_sha256, body FROM inbox
        WHERE inbox.source_id = input.source_id AND inbox.source_account = input.source_account
          AND inbox.event_id = input.event_id
        LIMIT 1
    ) i
), duplicates AS (
    INSERT INTO inbox_duplicates (inbox_id, received_at)
    SELECT id, received_at FROM taken WHERE kind = 'duplicate' AND $19::bool
)
SELECT arrival, id, 'accepted' AS kind, NULL::bytea AS stored FROM accepted
UNION ALL
SELECT arrival, id, kind,
       CASE WHEN kind = 'differs'
            THEN coalesce((SELECT p.body FROM inbox_payloads p WHERE p.inbox_id = taken.id AND p.received_at = taken.stored_at),
                          legacy_body) END
FROM taken
