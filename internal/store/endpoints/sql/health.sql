-- Endpoint $1's attempts per hour since $2, summed from its figures per
-- minute (delivery_minutes' primary key: at most 60 rows an hour, whatever
-- the endpoint's volume), latency buckets included.
SELECT date_trunc('hour', minute) AS hour, sum(attempts), sum(delivered), sum(failed), sum(answered), sum(latency_ms_sum),
       sum(le_50), sum(le_100), sum(le_250), sum(le_500), sum(le_1000), sum(le_2500), sum(le_5000), sum(le_10000), sum(le_inf)
FROM delivery_minutes
WHERE endpoint_id = $1 AND minute >= date_trunc('minute', $2::timestamptz)
GROUP BY 1
ORDER BY 1
