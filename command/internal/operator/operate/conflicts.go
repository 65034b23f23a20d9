package operate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/conflicts.sql
	conflictsSQL string
	//go:embed sql/conflict_body.sql
	conflictBodySQL string
	//go:embed sql/conflict_decide.sql
	conflictDecideSQL string
)

// Conflict is a delivery whose event key was taken by different content:
// the original stays in the inbox, the newcomer is kept here. A conflict is
// named by its event's inbox id and its own received_at.
type Conflict struct {
	// ID names the conflict in one token (ConflictID).
	ID         string    `json:"id"`
	InboxID    int64     `json:"inbox_id"`
	ReceivedAt time.Time `json:"received_at"`
	BodySHA256 []byte    `json:"body_sha256"`
	TenantID   string    `json:"tenant_id"`
	SourceID   string    `json:"source_id"`
	EventID    string    `json:"event_id"`
	EventType  string    `json:"event_type"`
	// OriginalAt is when the content that stands was received.
	OriginalAt time.Time `json:"original_received_at"`
	// Outcome is what an operator made of it; absent: open.
	Outcome *ConflictOutcome `json:"outcome,omitempty"`
}

// ConflictOutcome is an operator's decision on a conflict.
type ConflictOutcome struct {
	Outcome   string    `json:"outcome" enum:"dismissed,resolved" doc:"dismissed: the content that stands is right, the newcomer was noise; resolved: set right another way (a new event, a reconciliation, a correction)."`
	Note      string    `json:"note" doc:"Why, in the operator's words."`
	Actor     string    `json:"actor" doc:"Who decided (the token's name)."`
	DecidedAt time.Time `json:"decided_at"`
}

// ConflictFilter selects conflicts; Since and Until bound their
// received_at.
type ConflictFilter struct {
	TenantID string `json:"tenant_id,omitempty"`
	// State is "open" (no outcome), "dismissed" or "resolved"; empty: any.
	State string    `json:"state,omitempty"`
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	After string    `json:"after,omitempty"`
	Limit int       `json:"limit,omitempty"`
}

// Conflicts lists conflicting deliveries, newest first.
func (o *Operator) Conflicts(ctx context.Context, scope *Scope, f ConflictFilter) (Page[Conflict], error) {
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return Page[Conflict]{}, err
	}
	if err := checkUUID("tenant_id", f.TenantID); err != nil {
		return Page[Conflict]{}, err
	}
	w := &where{}
	if t := scope.tenant(); t != nil {
		w.add("i.tenant_id = %s", *t)
	}
	w.equal("i.tenant_id", f.TenantID)
	switch f.State {
	case "":
	case "open":
		w.add("o.outcome IS NULL")
	case "dismissed", "resolved":
		w.equal("o.outcome", f.State)
	default:
		return Page[Conflict]{}, invalid("state", "is open, dismissed or resolved")
	}
	w.timeRange("c.received_at", f.Since, f.Until)
	if f.After != "" {
		at, id, err := decodeCursor(f.After)
		if err != nil {
			return Page[Conflict]{}, err
		}
		w.add("c.received_at <= %s AND (c.received_at < %s OR c.inbox_id < %s)", at, at, id)
	}
	list, err := o.conflicts(ctx, w, limit+1)
	if err != nil {
		return Page[Conflict]{}, err
	}
	return page(list, limit, func(c Conflict) string { return encodeCursor(c.ReceivedAt, c.InboxID) }), nil
}

func (o *Operator) conflicts(ctx context.Context, w *where, limit int) ([]Conflict, error) {
	q := conflictsSQL + w.String() + " ORDER BY c.received_at DESC, c.inbox_id DESC LIMIT " + strconv.Itoa(limit)
	rows, err := o.pool.Query(ctx, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list conflicts: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Conflict, error) {
		var c Conflict
		var outcome, note, actor *string
		var at *time.Time
		err := r.Scan(&c.InboxID, &c.ReceivedAt, &c.BodySHA256, &c.TenantID, &c.SourceID, &c.EventID, &c.EventType, &c.OriginalAt,
			&outcome, &note, &actor, &at)
		c.ID = ConflictID(c.InboxID, c.ReceivedAt)
		if outcome != nil {
			c.Outcome = &ConflictOutcome{Outcome: *outcome, Note: *note, Actor: *actor, DecidedAt: *at}
		}
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("list conflicts: %w", err)
	}
	return list, nil
}

// ConflictDetail is a conflict with both contents: the original (the
// inbox's) and the newcomer. Reading it is a payload read.
type ConflictDetail struct {
	Conflict
	Original Payload `json:"original"`
	Newcomer Payload `json:"newcomer"`
}

// Conflict returns one conflict with both bodies (a payload read).
func (o *Operator) Conflict(ctx context.Context, scope *Scope, inboxID int64, receivedAt time.Time) (ConflictDetail, error) {
	w := oneConflict(scope, inboxID, receivedAt)
	list, err := o.conflicts(ctx, w, 1)
	if err != nil {
		return ConflictDetail{}, err
	}
	if len(list) == 0 {
		return ConflictDetail{}, notFound("conflict", fmt.Sprintf("%d@%s", inboxID, receivedAt.Format(time.RFC3339Nano)))
	}
	d := ConflictDetail{Conflict: list[0], Newcomer: Payload{State: PayloadExpired}}
	if d.Original, err = o.payload(ctx, inboxID, d.TenantID); err != nil {
		return ConflictDetail{}, err
	}
	err = o.pool.QueryRow(ctx, conflictBodySQL, inboxID, receivedAt).Scan(&d.Newcomer.Body)
	switch {
	case err == nil:
		d.Newcomer.State = PayloadKept
	case !errors.Is(err, pgx.ErrNoRows):
		return ConflictDetail{}, fmt.Errorf("load conflict body: %w", err)
	}
	return d, nil
}

// DecideConflict records what an operator made of conflict id (dismissed or
// resolved, with a note); deciding again replaces the decision. The
// conflict must be one the scope sees.
func (o *Operator) DecideConflict(ctx context.Context, scope *Scope, id string, d ConflictOutcome) (Conflict, error) {
	if d.Outcome != "dismissed" && d.Outcome != "resolved" {
		return Conflict{}, invalid("outcome", "is dismissed or resolved")
	}
	inboxID, receivedAt, err := ParseConflictID(id)
	if err != nil {
		return Conflict{}, err
	}
	w := oneConflict(scope, inboxID, receivedAt)
	list, err := o.conflicts(ctx, w, 1)
	if err != nil {
		return Conflict{}, err
	}
	if len(list) == 0 {
		return Conflict{}, notFound("conflict", id)
	}
	if _, err := o.pool.Exec(ctx, conflictDecideSQL, inboxID, receivedAt, d.Outcome, d.Note, d.Actor); err != nil {
		return Conflict{}, fmt.Errorf("decide conflict: %w", err)
	}
	list, err = o.conflicts(ctx, w, 1)
	if err != nil {
		return Conflict{}, err
	}
	return list[0], nil
}

// oneConflict selects conflict (inboxID, receivedAt) among those scope sees.
func oneConflict(scope *Scope, inboxID int64, receivedAt time.Time) *where {
	w := &where{}
	w.add("c.inbox_id = %s AND c.received_at = %s", inboxID, receivedAt)
	if t := scope.tenant(); t != nil {
		w.add("i.tenant_id = %s", *t)
	}
	return w
}
