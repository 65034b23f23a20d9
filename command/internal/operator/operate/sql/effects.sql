-- The effects on one object ($1 source, $2 source account, $3 object id,
-- $4 tenant), whichever event caused them: the union of the running effect
-- groups' own queries (effect.Group.Trail, each in effects_branch.sql),
-- joined below when the operator is built. The parameters are typed once
-- here, so a group's query may leave some out. The group is its name
-- without the deployment's topic prefix.
WITH trail_of (source_id, source_account, object_id, tenant_id) AS (
    SELECT $1::uuid, $2::text, $3::text, $4::uuid
)
