package delivery

// Statements are the deliverer's SQL by file name, for the test of the
// plans its connections keep.
var Statements = map[string]string{
	"pending": pendingSQL, "key_next": keyNextSQL, "held": heldSQL, "redo": redoSQL, "mark_read": markReadSQL, "mark": markSQL,
	"minutes_prune": minutesPruneSQL, "queue_rows": queueRowsSQL, "queue_backfill": queueBackfillSQL, "delivered": deliveredSQL,
	"failed": failedSQL, "bodies": bodiesSQL, "failing": failingSQL, "recovered": recoveredSQL, "disable": disableSQL,
}
