package catalog

import _ "embed"

// Queries live in sql/ so they can be read (and run in psql) as SQL.
var (
	//go:embed sql/types.sql
	typesSQL string
	//go:embed sql/schema.sql
	schemaSQL string
	//go:embed sql/entries.sql
	entriesSQL string
	//go:embed sql/latest.sql
	latestSQL string
	//go:embed sql/lock_tenant.sql
	lockTenantSQL string
	//go:embed sql/insert_type.sql
	insertTypeSQL string
	//go:embed sql/insert_version.sql
	insertVersionSQL string
	//go:embed sql/deprecate.sql
	deprecateSQL string
	//go:embed sql/accepted.sql
	acceptedSQL string
	//go:embed sql/releasable.sql
	releasableSQL string
	//go:embed sql/publish.sql
	publishSQL string
	//go:embed sql/quarantine.sql
	quarantineSQL string
)
