-- A dead letter as it was consumed, for a replay.
SELECT consumer_group, topic, partition, "offset", key, headers, payload, replayed_at
FROM dead_letters WHERE id = $1
