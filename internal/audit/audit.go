// Package audit keeps the operators' audit trail: who (which admin token)
// did what (an action) to which target (a resource and its id), in which
// tenant, when, and with what outcome. Every operate action and every read
// of a payload leaves one row.
//
// The invariant: a row for a successful action commits in the action's own
// transaction (Actor.Record is given that transaction), so there is never
// an action without its record nor a record of an action rolled back. A
// refused or failed action has no transaction left to join; its row is
// written on its own (Actor.Refused).
package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Outcomes of an audited action: done, or refused how.
const (
	OutcomeOK        = "ok"
	OutcomeNotFound  = "not_found"
	OutcomeForbidden = "forbidden"
	OutcomeConflict  = "conflict"
	OutcomeInvalid   = "invalid"
	OutcomeError     = "error"
)

// Outcomes is the vocabulary of outcomes, for a filter to be checked by.
func Outcomes() []string {
	return []string{OutcomeOK, OutcomeNotFound, OutcomeForbidden, OutcomeConflict, OutcomeInvalid, OutcomeError}
}

// Execer is a transaction or a pool.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Target is what an action was done to.
type Target struct {
	Action   string // e.g. source.disable, tenant.create, event.read_payload
	Resource string // e.g. source
	ID       string
	TenantID string // empty when the target belongs to no tenant
}

// Actor is who acts: an admin token, or, with an empty TokenID, the CLI
// (which holds the database credentials). A nil *Actor records nothing:
// internal callers (tests, the demo, the bench) are not operators.
type Actor struct {
	TokenID string
}

// Record writes the successful action's row in tx, the action's own
// transaction.
func (a *Actor) Record(ctx context.Context, tx Execer, t Target) error {
	return a.write(ctx, tx, t, OutcomeOK)
}

// Refused writes the row of an action that was refused or failed; outcome
// says how (e.g. "not_found", "conflict", "error"), never with the
// underlying error's text.
func (a *Actor) Refused(ctx context.Context, db Execer, t Target, outcome string) error {
	return a.write(ctx, db, t, outcome)
}

func (a *Actor) write(ctx context.Context, db Execer, t Target, outcome string) error {
	if a == nil {
		return nil
	}
	_, err := db.Exec(ctx, `INSERT INTO admin_audit (token_id, action, resource, target_id, tenant_id, outcome)
VALUES ($1, $2, $3, $4, $5, $6)`, nullable(a.TokenID), t.Action, t.Resource, t.ID, nullable(t.TenantID), outcome)
	if err != nil {
		return fmt.Errorf("write audit record: %w", err)
	}
	return nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullableTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Entry is one row of the trail.
type Entry struct {
	ID       int64     `json:"id"`
	At       time.Time `json:"at"`
	TokenID  string    `json:"token_id,omitempty"`
	Action   string    `json:"action"`
	Resource string    `json:"resource"`
	TargetID string    `json:"target_id"`
	TenantID string    `json:"tenant_id,omitempty"`
	Outcome  string    `json:"outcome"`
}

// Filter selects entries, newest first: those of one tenant (empty: all),
// with ids below Before (0: from the newest), at most Limit; and, each
// when given, at or after Since and before Until, of one action, token
// and outcome.
type Filter struct {
	TenantID string
	Before   int64
	Limit    int

	Since, Until             time.Time
	Action, TokenID, Outcome string
}

// List returns the entries Filter selects.
func List(ctx context.Context, db interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, f Filter) ([]Entry, error) {
	rows, err := db.Query(ctx, `SELECT id, at, coalesce(token_id::text, ''), action, resource, target_id, coalesce(tenant_id::text, ''), outcome
FROM admin_audit
WHERE ($1::uuid IS NULL OR tenant_id = $1) AND ($2 = 0 OR id < $2)
  AND ($4::timestamptz IS NULL OR at >= $4) AND ($5::timestamptz IS NULL OR at < $5)
  AND ($6::text IS NULL OR action = $6) AND ($7::uuid IS NULL OR token_id = $7) AND ($8::text IS NULL OR outcome = $8)
ORDER BY id DESC LIMIT $3`, nullable(f.TenantID), f.Before, f.Limit, nullableTime(f.Since), nullableTime(f.Until),
		nullable(f.Action), nullable(f.TokenID), nullable(f.Outcome))
	if err != nil {
		return nil, fmt.Errorf("read audit trail: %w", err)
	}
	entries, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Entry])
	if err != nil {
		return nil, fmt.Errorf("read audit trail: %w", err)
	}
	return entries, nil
}
