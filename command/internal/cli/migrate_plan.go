package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/pg/lockplan"
	"github.com/sluicehq/sluice/migrations"
)

// planEstimate is said with every plan: the locks are read from the text.
const planEstimate = "locks are estimated from each statement's text with Postgres's documented lock levels, not asked of Postgres; " +
	"a statement marked unknown must be checked by hand"

// migrationPlan is `sluice migrate --plan -o json`.
type migrationPlan struct {
	DatabaseSchema *int64          `json:"database_schema"`
	Schema         int64           `json:"schema"`
	Estimate       string          `json:"estimate"`
	LockTimeout    float64         `json:"lock_timeout_seconds"`
	Pending        []plannedChange `json:"pending"`
}

type plannedChange struct {
	Version     int64           `json:"version"`
	File        string          `json:"file"`
	Transaction bool            `json:"transaction"`
	LockTimeout bool            `json:"lock_timeout"` // false: it waits as long as it must (it blocks no one meanwhile)
	Strongest   string          `json:"strongest_lock"`
	Statements  []plannedAction `json:"statements"`
}

type plannedAction struct {
	Line  int           `json:"line"`
	SQL   string        `json:"sql"`
	Known bool          `json:"known"`
	Locks []plannedLock `json:"locks"`
	Note  string        `json:"note,omitempty"`
}

type plannedLock struct {
	Mode   string `json:"mode"`
	Table  string `json:"table"`
	Blocks string `json:"blocks"`
	New    bool   `json:"new_table,omitempty"`
}

// printPlan lists the migrations the database has not applied, each
// statement with the locks it is estimated to take. It only reads.
func (c *MigrateCmd) printPlan(ctx context.Context, pool *pgxpool.Pool) error {
	all, err := lockplan.ReadFS(migrations.FS)
	if err != nil {
		return err
	}
	plan := migrationPlan{Estimate: planEstimate, LockTimeout: c.LockTimeout.Seconds(), Pending: []plannedChange{}}
	applied, err := pg.AppliedVersions(ctx, pool)
	switch {
	case errors.Is(err, pg.ErrNoSchema):
	case err != nil:
		return err
	default:
		v, err := pg.SchemaVersion(ctx, pool)
		if err != nil {
			return err
		}
		plan.DatabaseSchema = &v
	}
	for _, m := range all {
		plan.Schema = m.Version
		if !applied[m.Version] {
			plan.Pending = append(plan.Pending, planned(m))
		}
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(plan)
	}
	_, err = fmt.Print(plan.text())
	return err
}

func planned(m lockplan.Migration) plannedChange {
	p := plannedChange{Version: m.Version, File: m.File, Transaction: m.Transaction, LockTimeout: !m.LeavesReadsAndWrites(),
		Strongest: m.Strongest().String()}
	for _, s := range m.Statements {
		a := plannedAction{Line: s.Line, SQL: s.SQL, Known: s.Known, Note: s.Note, Locks: []plannedLock{}}
		for _, l := range s.Locks {
			blocks := l.Mode.Blocks()
			if l.New {
				blocks = "nothing: a table this migration creates"
			}
			a.Locks = append(a.Locks, plannedLock{Mode: l.Mode.String(), Table: l.Table, Blocks: blocks, New: l.New})
		}
		p.Statements = append(p.Statements, a)
	}
	return p
}

func (p migrationPlan) text() string {
	var b strings.Builder
	switch {
	case p.DatabaseSchema == nil:
		fmt.Fprintf(&b, "the database has no Sluice schema; this binary's is %d: %d migrations to apply\n", p.Schema, len(p.Pending))
	case len(p.Pending) == 0:
		fmt.Fprintf(&b, "schema %d in the database, %d in this binary: nothing to apply\n", *p.DatabaseSchema, p.Schema)
		return b.String()
	default:
		fmt.Fprintf(&b, "schema %d in the database, %d in this binary: %d pending\n", *p.DatabaseSchema, p.Schema, len(p.Pending))
	}
	fmt.Fprintf(&b, "(%s)\n", planEstimate)
	for _, m := range p.Pending {
		how := "one transaction"
		if !m.Transaction {
			how = "no transaction: each statement commits on its own, and a retry runs them all again"
		}
		wait := fmt.Sprintf("each statement waits at most %gs for its locks", p.LockTimeout)
		if !m.LockTimeout {
			wait = "it waits for its locks as long as it must: no read or write waits behind it"
		}
		fmt.Fprintf(&b, "\n%s: %s; strongest lock %s; %s\n", m.File, how, m.Strongest, wait)
		for _, s := range m.Statements {
			first, _, _ := strings.Cut(strings.TrimSpace(s.SQL), "\n")
			fmt.Fprintf(&b, "  line %-4d %s\n", s.Line, shown(strings.TrimSpace(first)))
			if !s.Known {
				fmt.Fprintf(&b, "            locks unknown\n")
			}
			for _, l := range s.Locks {
				fmt.Fprintf(&b, "            %s on %s: blocks %s\n", l.Mode, shown(l.Table), l.Blocks)
			}
			if s.Note != "" {
				fmt.Fprintf(&b, "            %s\n", s.Note)
			}
		}
	}
	return b.String()
}

// migrateResult is what `sluice migrate -o json` prints.
type migrateResult struct {
	From      int64   `json:"from"`
	To        int64   `json:"to"`
	Applied   []int64 `json:"applied"`
	Retries   int     `json:"lock_retries"`
	StalledMS int64   `json:"stalled_ms"`
}

// printReport says what migrating did: the versions, and how often and how
// long the migrations waited for locks before giving up and trying again.
func (c *MigrateCmd) printReport(r pg.MigrateReport) error {
	res := migrateResult{From: r.From, To: r.To, Applied: r.Applied, Retries: len(r.Retries), StalledMS: r.Stalled().Milliseconds()}
	if res.Applied == nil {
		res.Applied = []int64{}
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	if len(r.Applied) == 0 {
		_, err := fmt.Printf("schema %d: nothing to apply\n", r.To)
		return err
	}
	_, err := fmt.Printf("schema %d -> %d: applied %v; %d attempts gave up waiting for a lock (%s in all) and were tried again\n",
		r.From, r.To, r.Applied, len(r.Retries), r.Stalled().Round(time.Millisecond))
	return err
}
