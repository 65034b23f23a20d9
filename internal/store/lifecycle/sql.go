package lifecycle

import _ "embed"

// Queries live in sql/ so they can be read (and run in psql) as SQL.
var (
	//go:embed sql/partitions.sql
	partitionsSQL string
	//go:embed sql/expire_keys.sql
	expireKeysSQL string
	//go:embed sql/legacy_exists.sql
	legacyExistsSQL string
	//go:embed sql/legacy_live.sql
	legacyLiveSQL string
	//go:embed sql/legacy_drop.sql
	legacyDropSQL string
	//go:embed sql/expire_dead_letters.sql
	expireDeadLettersSQL string
	//go:embed sql/expire_parked.sql
	expireParkedSQL string
	//go:embed sql/expire_reconcile_runs.sql
	expireReconcileRunsSQL string
	//go:embed sql/expire_links.sql
	expireLinksSQL string
	//go:embed sql/expire_idempotency_keys.sql
	expireIdempotencyKeysSQL string
	//go:embed sql/expire_deliveries.sql
	expireDeliveriesSQL string
	//go:embed sql/legacy_dispatch_exists.sql
	legacyDispatchExistsSQL string
	//go:embed sql/legacy_dispatch_live.sql
	legacyDispatchLiveSQL string
	//go:embed sql/legacy_dispatch_drop.sql
	legacyDispatchDropSQL string
)

var (
	//go:embed sql/erase_subject.sql
	eraseSubjectSQL string
	//go:embed sql/erase_tenant.sql
	eraseTenantSQL string
	//go:embed sql/erase_tenant_legacy.sql
	eraseTenantLegacySQL string
)
