package operate

import (
	"fmt"
	"strings"
	"time"
)

// where builds a WHERE clause of the filters a request names, and only
// those: a search with optional filters written as ($1 = ” OR col = $1)
// gets one generic plan that suits none of them, while a statement per
// combination lets each use its index (the combinations are few, so the
// statement cache stays small).
type where struct {
	clauses []string
	args    []any
}

// add appends a clause; each %s in it becomes the placeholder of the next
// argument, in order.
func (w *where) add(clause string, args ...any) {
	ph := make([]any, len(args))
	for i, a := range args {
		w.args = append(w.args, a)
		ph[i] = fmt.Sprintf("$%d", len(w.args))
	}
	w.clauses = append(w.clauses, fmt.Sprintf(clause, ph...))
}

// equal adds col = v when v is given.
func (w *where) equal(col, v string) {
	if v != "" {
		w.add(col+" = %s", v)
	}
}

// timeRange adds since <= col < until, each bound when given.
func (w *where) timeRange(col string, since, until time.Time) {
	if !since.IsZero() {
		w.add(col+" >= %s", since)
	}
	if !until.IsZero() {
		w.add(col+" < %s", until)
	}
}

func (w *where) String() string {
	if len(w.clauses) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.clauses, " AND ")
}
