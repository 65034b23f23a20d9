-- +goose Up
-- Providers' payloads as they are sent today (issue 11).
--
-- 1. Ties between projection versions are broken by the order Sluice accepted
--    the events (the inbox id, sluice_inboxid on every record), no longer by
--    the provider's event id: GitHub's suspend and unsuspend of one second
--    were ordered by their random delivery ids. Inbox ids are given in arrival
--    order (ingest/sql/accept.sql), travel with the record, and are the same
--    on every replay, rewind or dead-letter replay. Rows written before this
--    migration have none (NULL counts as 0: the first event of equal time
--    accepted after it wins, once).
ALTER TABLE subscriptions ADD COLUMN version_inbox_id bigint;
ALTER TABLE github_installations ADD COLUMN version_inbox_id bigint;
ALTER TABLE verifications ADD COLUMN version_inbox_id bigint;

-- Same contract as sluice_supersedes (00004), with the acceptance order as
-- the tie-break: a final state outranks a non-final one whatever its time;
-- between two final states the earlier stands; otherwise the strictly newer
-- (time, inbox id) wins and an equal version keeps the stored row.
-- +goose StatementBegin
CREATE FUNCTION sluice_supersedes_accepted(stored_final boolean, stored_time timestamptz, stored_inbox_id bigint,
                                           new_final boolean, new_time timestamptz, new_inbox_id bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN stored_final AND new_final
            THEN (new_time, coalesce(new_inbox_id, 0)) < (stored_time, coalesce(stored_inbox_id, 0))
        WHEN stored_final THEN false
        WHEN new_final THEN true
        ELSE (new_time, coalesce(new_inbox_id, 0)) > (stored_time, coalesce(stored_inbox_id, 0))
    END
$$;
-- +goose StatementEnd

-- 2. Events whose resource is named only through another object. A Stripe
--    charge.refunded of API version 2025-03-31 (basil) and later names no
--    invoice, only its payment intent and charge; invoice_payment.paid (and
--    invoice.paid in older versions, or with its payments list) says which
--    invoice a payment paid. Ingest records those links, and resolves such an
--    event in the transaction that accepts it; one it cannot resolve yet is
--    kept as 'waiting' (not published, not quarantined) and is published in
--    the transaction that records its link.
ALTER TABLE inbox DROP CONSTRAINT inbox_status_check;
ALTER TABLE inbox ADD CONSTRAINT inbox_status_check
    CHECK (status IN ('published', 'unhandled', 'quarantined', 'waiting')) NOT VALID;
ALTER TABLE inbox VALIDATE CONSTRAINT inbox_status_check;

-- A payment (payment intent or charge id) and the object it paid, per source
-- account: the first link wins (a payment split over several invoices routes
-- its refund to the first one recorded).
CREATE TABLE object_links (
    source_id      uuid NOT NULL,
    source_account text NOT NULL,
    object_type    text NOT NULL,
    link_id        text NOT NULL,
    object_id      text NOT NULL,
    inbox_id       bigint NOT NULL, -- the event that told us
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, source_account, object_type, link_id)
);

-- Accepted events waiting for their object: the ids that may resolve it (in
-- order of preference), and the outbox row to write once it is known (its
-- headers lack only ce_subject and ce_partitionkey).
CREATE TABLE inbox_waiting (
    inbox_id       bigint PRIMARY KEY,
    tenant_id      uuid NOT NULL,
    source_id      uuid NOT NULL,
    source_account text NOT NULL,
    object_type    text NOT NULL,
    via            text[] NOT NULL,
    topic          text NOT NULL,
    headers        jsonb NOT NULL,
    payload        bytea,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX inbox_waiting_via ON inbox_waiting USING gin (via);

-- +goose Down
DROP TABLE inbox_waiting, object_links;
UPDATE inbox SET status = 'quarantined', reason = 'waiting for its object when migrated down' WHERE status = 'waiting';
ALTER TABLE inbox DROP CONSTRAINT inbox_status_check;
ALTER TABLE inbox ADD CONSTRAINT inbox_status_check CHECK (status IN ('published', 'unhandled', 'quarantined'));
DROP FUNCTION sluice_supersedes_accepted;
ALTER TABLE verifications DROP COLUMN version_inbox_id;
ALTER TABLE github_installations DROP COLUMN version_inbox_id;
ALTER TABLE subscriptions DROP COLUMN version_inbox_id;
