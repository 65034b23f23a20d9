-- A dead letter as lists show it (no key, headers or payload); the caller
-- adds the filters (WHERE), the order (id, newest first) and the limit.
SELECT d.id, d.consumer_group, d.topic, d.partition, d."offset", coalesce(d.headers->>'ce_tenantid', ''),
       coalesce(d.headers->>'ce_id', ''), coalesce(d.headers->>'ce_type', ''),
       coalesce(d.headers->>'sluice_inboxid', ''), d.reason, d.attempts, d.first_failed_at, d.last_failed_at,
       d.replayed_at
FROM dead_letters d
