-- Records Kafka refused for good, per slot, waiting for an operator; the
-- relay's own slot ($1) shows 0 when it has none, so a dashboard reads 0
-- rather than no data.
SELECT slot, count(*)::float8 FROM cdc_parked GROUP BY slot
UNION ALL
SELECT $1, 0 WHERE NOT EXISTS (SELECT 1 FROM cdc_parked WHERE slot = $1)
