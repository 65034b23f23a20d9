-- Dead letters not replayed yet, per consumer group, and the oldest one's age.
SELECT consumer_group, count(*)::float8, coalesce(extract(epoch FROM now() - min(first_failed_at)), 0)::float8
FROM dead_letters
WHERE replayed_at IS NULL
GROUP BY consumer_group
