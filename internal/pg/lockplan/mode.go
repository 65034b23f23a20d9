package lockplan

import "strings"

// Mode is a table-level lock mode, weakest first: a mode conflicts with
// the modes Postgres's table of conflicts says, and the strongest one a
// statement takes decides what waits for it.
type Mode int

// The table-level lock modes of Postgres, in order of strength. None is a
// statement that takes no lock on an existing table (a new table, a
// function, a grant).
const (
	None Mode = iota
	AccessShare
	RowShare
	RowExclusive
	ShareUpdateExclusive
	Share
	ShareRowExclusive
	Exclusive
	AccessExclusive
)

var modeNames = [...]string{"none", "ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE", "SHARE",
	"SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"}

func (m Mode) String() string {
	if m < None || m > AccessExclusive {
		return "unknown"
	}
	return modeNames[m]
}

// parseMode reads a mode as LOCK TABLE ... IN <mode> MODE spells it.
func parseMode(s string) (Mode, bool) {
	s = strings.Join(strings.Fields(strings.ToUpper(s)), " ")
	for m, name := range modeNames {
		if name == s {
			return Mode(m), true
		}
	}
	return None, false
}

// Blocks says what the running pipeline cannot do on a table while the
// mode is held, or queued for: a lock waiting in the queue blocks every
// later request that conflicts with it, so a statement waiting for ACCESS
// EXCLUSIVE stops ingest's inserts as surely as one that holds it (for at
// most the lock timeout).
func (m Mode) Blocks() string {
	switch {
	case m == AccessExclusive:
		return "reads and writes"
	case m >= Share:
		return "writes"
	case m == ShareUpdateExclusive:
		return "other schema changes and VACUUM (reads and writes go on)"
	case m >= AccessShare:
		return "only schema changes"
	}
	return "nothing"
}
