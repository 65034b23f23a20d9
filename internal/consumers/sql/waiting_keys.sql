-- The keys of a partition that have records set aside, and how many: every
-- later record of such a key waits behind them.
SELECT key, count(*) FROM consumer_waiting
WHERE consumer_group = $1 AND topic = $2 AND partition = $3
GROUP BY key
