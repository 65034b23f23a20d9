-- +goose Up
-- An endpoint's transformation (CEL yielding the JSON body sent in place of
-- the event's, checked and tried when it is set; NULL: the body as
-- received) and the version of its rules, its filter expression and its
-- transformation together: every change of either writes the next
-- version, and keeps it in endpoint_rule_versions, so a delivery names the
-- rules it was created under (deliveries.rules_version, written by the
-- fan-out's insert) and those its last send used
-- (deliveries.sent_rules_version, written by the outcome's update; each
-- failed attempt's in delivery_attempts.rules_version): no statement is
-- added to a delivery's life (docs/destinations.md, "Versions of the
-- rules").
--
-- endpoints.rules_version's default is a constant: adding it rewrites
-- nothing; every existing endpoint's rules are version 1. The other
-- columns are nullable with no default: a binary of the release before
-- reads and writes its tables without them.
ALTER TABLE endpoints ADD COLUMN transformation text;
ALTER TABLE endpoints ADD COLUMN rules_version bigint NOT NULL DEFAULT 1;
ALTER TABLE deliveries ADD COLUMN rules_version bigint;
ALTER TABLE deliveries ADD COLUMN sent_rules_version bigint;
ALTER TABLE delivery_attempts ADD COLUMN rules_version bigint;

-- Each version of each endpoint's rules, as it was set (version 1 of an
-- endpoint created before this release is not here: its rules are those of
-- the endpoint until its first change).
CREATE TABLE endpoint_rule_versions (
    endpoint_id       uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    version           bigint NOT NULL,
    filter_expression text,
    transformation    text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (endpoint_id, version)
);

-- +goose Down
DROP TABLE endpoint_rule_versions;
ALTER TABLE delivery_attempts DROP COLUMN rules_version;
ALTER TABLE deliveries DROP COLUMN sent_rules_version;
ALTER TABLE deliveries DROP COLUMN rules_version;
ALTER TABLE endpoints DROP COLUMN rules_version;
ALTER TABLE endpoints DROP COLUMN transformation;
