package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Where a window's Postgres time goes, statement by statement
// (BENCH_STATEMENTS=1): pg_stat_statements around each ladder window, its
// planning counted apart, written to <window>.statements.md. The CPU
// figures say how much Postgres spent; this says on what, as a CPU profile
// says it of Sluice's process. It needs the server started with the module
// loaded (`SLUICE_PG_STATEMENTS=1 make up`), and the bench fails at once
// without it rather than write nothing.

// statement is one statement's counters so far.
type statement struct {
	calls, plans, rows int64
	execMS, planMS     float64
	text               string
}

// statements is pg_stat_statements for the bench database, by query id.
type statements map[int64]statement

// statementsOn says whether BENCH_STATEMENTS asks for the statements and,
// if so, readies the view in the bench database.
func (b *bench) statementsOn(ctx context.Context) (bool, error) {
	if os.Getenv("BENCH_STATEMENTS") == "" {
		return false, nil
	}
	var loaded string
	if err := b.pool.QueryRow(ctx, `SHOW shared_preload_libraries`).Scan(&loaded); err != nil {
		return false, err
	}
	if !strings.Contains(loaded, "pg_stat_statements") {
		return false, fmt.Errorf("BENCH_STATEMENTS=1 needs pg_stat_statements loaded: run `SLUICE_PG_STATEMENTS=1 make up` (shared_preload_libraries is %q)", loaded)
	}
	_, err := b.pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	return true, err
}

// readStatements reads the bench database's statements; nil when
// BENCH_STATEMENTS is off.
func (b *bench) readStatements(ctx context.Context) statements {
	if !b.stmts {
		return nil
	}
	rows, err := b.pool.Query(ctx, `SELECT queryid, calls, plans, rows, total_exec_time, total_plan_time, query
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND query NOT LIKE '%pg_stat_statements%'`)
	if err != nil {
		log.Printf("statements: %v", err)
		return nil
	}
	defer rows.Close()
	out := statements{}
	for rows.Next() {
		var id int64
		var s statement
		if err := rows.Scan(&id, &s.calls, &s.plans, &s.rows, &s.execMS, &s.planMS, &s.text); err != nil {
			log.Printf("statements: %v", err)
			return nil
		}
		out[id] = s
	}
	return out
}

// writeStatements writes what each statement took between before and
// now, per event, the costliest first, to <name>.statements.md.
func (b *bench) writeStatements(ctx context.Context, name string, before statements, events float64) {
	if before == nil || events <= 0 {
		return
	}
	type delta struct {
		statement
		totalMS float64
	}
	var ds []delta
	for id, s := range b.readStatements(ctx) {
		o := before[id]
		d := statement{calls: s.calls - o.calls, plans: s.plans - o.plans, rows: s.rows - o.rows,
			execMS: s.execMS - o.execMS, planMS: s.planMS - o.planMS, text: s.text}
		if d.calls > 0 || d.plans > 0 {
			ds = append(ds, delta{d, d.execMS + d.planMS})
		}
	}
	slices.SortFunc(ds, func(x, y delta) int { return cmp.Compare(y.totalMS, x.totalMS) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %.0f events; time inside statements (wall time of the backends, planning apart), per event\n\n", name, events)
	fmt.Fprintf(&sb, "| us/event | plan us/event | calls | plans | rows | statement |\n|---:|---:|---:|---:|---:|---|\n")
	for _, d := range ds[:min(len(ds), 15)] {
		fmt.Fprintf(&sb, "| %.1f | %.1f | %d | %d | %d | %s |\n", d.totalMS*1000/events, d.planMS*1000/events, d.calls, d.plans, d.rows, firstLine(d.text))
	}
	path := filepath.Join(b.outDir, name+".statements.md")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		log.Printf("statements: %v", err)
		return
	}
	log.Printf("statements written: %s", path)
}

// firstLine is a statement's first line, at most 100 bytes: the SQL files'
// opening comment names what the statement is for.
func firstLine(q string) string {
	q, _, _ = strings.Cut(strings.TrimSpace(q), "\n")
	q = strings.ReplaceAll(q, "|", "\\|")
	if len(q) > 100 {
		q = q[:100] + "..."
	}
	return q
}
