-- Keep endpoint $1's rules as they are now under their version (a new
-- endpoint's version 1).
INSERT INTO endpoint_rule_versions (endpoint_id, version, filter_expression, transformation)
SELECT id, rules_version, filter_expression, transformation FROM endpoints WHERE id = $1
ON CONFLICT (endpoint_id, version) DO NOTHING
