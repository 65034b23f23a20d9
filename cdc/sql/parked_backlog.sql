-- Records Kafka refused for good, per slot, waiting for an operator.
SELECT slot, count(*)::float8 FROM cdc_parked GROUP BY slot
