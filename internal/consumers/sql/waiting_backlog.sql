-- Records set aside, per consumer group, and how long the oldest has waited.
SELECT consumer_group, count(*)::float8, coalesce(extract(epoch FROM now() - min(waiting_since)), 0)::float8
FROM consumer_waiting
GROUP BY consumer_group
