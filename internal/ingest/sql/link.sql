-- Record which object each id of the batch's new events paid for (e.g. a
-- payment intent -> its invoice). The first link of an id stands. Rows go in
-- key order, so concurrent batches take index locks in one order.
INSERT INTO object_links (source_id, source_account, object_type, link_id, object_id, inbox_id)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
    AS t(source_id, source_account, object_type, link_id, object_id, inbox_id)
ORDER BY source_id, source_account, object_type, link_id
ON CONFLICT DO NOTHING
