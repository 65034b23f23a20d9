-- The event's records a consumer group set aside (consumers/waiting.go):
-- what they wait for, since when, and where in Kafka.
SELECT consumer_group, topic, partition, "offset", reason, waiting_since
FROM consumer_waiting
WHERE headers->>'sluice_inboxid' = $1::bigint::text
ORDER BY consumer_group, "offset"
