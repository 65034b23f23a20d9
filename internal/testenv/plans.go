package testenv

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Plan is a node of a plan Postgres keeps for a prepared statement, as
// EXPLAIN (FORMAT JSON) shows it, with its children.
type Plan struct {
	NodeType  string `json:"Node Type"`
	Relation  string `json:"Relation Name"`
	Index     string `json:"Index Name"`
	IndexCond string `json:"Index Cond"`
	Plans     []Plan `json:"Plans"`
	// JSON is the whole plan's text, for a failure's message.
	JSON string `json:"-"`
	// Statement is the statement's text.
	Statement string `json:"-"`
}

// Walk calls f on p and every node below it.
func (p Plan) Walk(f func(Plan)) {
	f(p)
	for _, c := range p.Plans {
		c.Walk(f)
	}
}

// KeptPlans explains every statement prepared on conn as its session would
// run it now (a plan kept for the connection depends on no value: each
// parameter is NULL), by statement name. What pgx prepared of an EXPLAIN
// is left out.
func KeptPlans(tb testing.TB, conn *pgx.Conn) map[string]Plan {
	tb.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT name, cardinality(parameter_types), statement FROM pg_prepared_statements`)
	if err != nil {
		tb.Fatal(err)
	}
	params, texts := map[string]int{}, map[string]string{}
	for rows.Next() {
		var (
			name, text string
			n          int
		)
		if err := rows.Scan(&name, &n, &text); err != nil {
			tb.Fatal(err)
		}
		params[name], texts[name] = n, text
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	plans := map[string]Plan{}
	for name, n := range params {
		execute := "EXECUTE " + name
		if n > 0 {
			execute += "(" + strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ") + ")"
		}
		var raw []byte
		if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+execute).Scan(&raw); err != nil {
			tb.Fatalf("explain %s: %v", name, err)
		}
		if strings.Contains(string(raw), `"Utility Statement"`) {
			continue // an EXPLAIN of an earlier call, which pgx prepared too
		}
		var doc []struct{ Plan Plan }
		if err := json.Unmarshal(raw, &doc); err != nil || len(doc) == 0 {
			tb.Fatalf("%s: %v: %s", name, err, raw)
		}
		doc[0].Plan.JSON, doc[0].Plan.Statement = string(raw), texts[name]
		plans[name] = doc[0].Plan
	}
	return plans
}
