package cdc

import _ "embed"

// Queries live in sql/ so they can be read (and run in psql) as SQL.
var (
	//go:embed sql/slot_state.sql
	slotStateSQL string
	//go:embed sql/slot_created.sql
	slotCreatedSQL string
	//go:embed sql/slot_progress.sql
	slotProgressSQL string
	//go:embed sql/slot_status.sql
	slotStatusSQL string
	//go:embed sql/heartbeat.sql
	heartbeatSQL string
	//go:embed sql/retention.sql
	retentionSQL string
	//go:embed sql/resync_rows.sql
	resyncRowsSQL string
	//go:embed sql/park.sql
	parkSQL string
)
