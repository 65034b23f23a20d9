package ingest

import _ "embed"

// Queries live in sql/ so they can be read (and run in psql) as SQL.
var (
	//go:embed sql/source.sql
	sourceSQL string
	//go:embed sql/accept.sql
	acceptSQL string
	//go:embed sql/existing.sql
	existingSQL string
	//go:embed sql/conflict.sql
	conflictSQL string
	//go:embed sql/attempts.sql
	attemptsSQL string
	//go:embed sql/apikey.sql
	apiKeySQL string
	//go:embed sql/link_lock.sql
	linkLockSQL string
	//go:embed sql/link.sql
	linkSQL string
	//go:embed sql/wait.sql
	waitSQL string
	//go:embed sql/resolve.sql
	resolveSQL string
	//go:embed sql/release.sql
	releaseSQL string
)
