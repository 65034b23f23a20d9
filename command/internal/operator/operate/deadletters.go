package operate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/envelope"
)

var (
	//go:embed sql/dead_letters.sql
	deadLettersSQL string
	//go:embed sql/dead_letter.sql
	deadLetterSQL string
)

// DeadLetter is a record a consumer group gave up on, without its payload.
type DeadLetter struct {
	ID            int64      `json:"id"`
	Group         string     `json:"group"`
	Topic         string     `json:"topic"`
	Partition     int32      `json:"partition"`
	Offset        int64      `json:"offset"`
	TenantID      string     `json:"tenant_id"`
	EventID       string     `json:"event_id"`
	EventType     string     `json:"event_type"`
	InboxID       string     `json:"inbox_id,omitempty"` // the event's processing id, as its record said
	Reason        string     `json:"reason"`
	Attempts      int        `json:"attempts"`
	FirstFailedAt time.Time  `json:"first_failed_at"`
	LastFailedAt  time.Time  `json:"last_failed_at"`
	ReplayedAt    *time.Time `json:"replayed_at,omitempty"`
}

func scanDeadLetter(r pgx.CollectableRow) (DeadLetter, error) {
	var d DeadLetter
	err := r.Scan(&d.ID, &d.Group, &d.Topic, &d.Partition, &d.Offset, &d.TenantID, &d.EventID, &d.EventType,
		&d.InboxID, &d.Reason, &d.Attempts, &d.FirstFailedAt, &d.LastFailedAt, &d.ReplayedAt)
	return d, err
}

// DeadLetterFilter selects dead letters; empty fields select everything.
type DeadLetterFilter struct {
	Group    string `json:"group,omitempty"`
	TenantID string `json:"tenant_id,omitempty"`
	// Reason matches reasons containing it, case-insensitively.
	Reason string `json:"reason,omitempty"`
	// Since and Until bound the last failure: Since <= last_failed_at < Until.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Replayed includes letters replayed already (a replay never selects them).
	Replayed bool `json:"replayed,omitempty"`
	// After is a page's Next; Limit defaults to DefaultLimit.
	After string `json:"after,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

func deadLetterWhere(scope *Scope, f DeadLetterFilter) (*where, error) {
	if err := checkUUID("tenant_id", f.TenantID); err != nil {
		return nil, err
	}
	w := &where{}
	if t := scope.tenant(); t != nil {
		w.add("d.headers->>'ce_tenantid' = %s", *t)
	}
	w.equal("d.headers->>'ce_tenantid'", f.TenantID)
	w.equal("d.consumer_group", f.Group)
	if f.Reason != "" {
		w.add("strpos(lower(d.reason), lower(%s)) > 0", f.Reason)
	}
	w.timeRange("d.last_failed_at", f.Since, f.Until)
	if !f.Replayed {
		w.clauses = append(w.clauses, "d.replayed_at IS NULL")
	}
	if f.After != "" {
		after, err := strconv.ParseInt(f.After, 10, 64)
		if err != nil {
			return nil, invalid("cursor", "not a cursor this API returned")
		}
		w.add("d.id < %s", after)
	}
	return w, nil
}

// DeadLetters lists the dead letters f selects, newest first.
func (o *Operator) DeadLetters(ctx context.Context, scope *Scope, f DeadLetterFilter) (Page[DeadLetter], error) {
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return Page[DeadLetter]{}, err
	}
	w, err := deadLetterWhere(scope, f)
	if err != nil {
		return Page[DeadLetter]{}, err
	}
	letters, err := o.deadLetters(ctx, w, "DESC", limit+1)
	if err != nil {
		return Page[DeadLetter]{}, err
	}
	return page(letters, limit, func(d DeadLetter) string { return strconv.FormatInt(d.ID, 10) }), nil
}

func (o *Operator) deadLetters(ctx context.Context, w *where, order string, limit int) ([]DeadLetter, error) {
	q := deadLettersSQL + w.String() + " ORDER BY d.id " + order
	if limit > 0 {
		q += " LIMIT " + strconv.Itoa(limit)
	}
	rows, err := o.pool.Query(ctx, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	letters, err := pgx.CollectRows(rows, scanDeadLetter)
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	return letters, nil
}

// DeadLetterDetail is a dead letter with the record it was: key, headers
// and payload. Reading it is a payload read.
type DeadLetterDetail struct {
	DeadLetter
	Key     []byte            `json:"key"`
	Headers map[string]string `json:"headers"`
	Payload Payload           `json:"payload"`
}

// DeadLetter returns dead letter id with its record (a payload read). A
// body that travelled by claim is loaded from its inbox row while kept.
func (o *Operator) DeadLetter(ctx context.Context, scope *Scope, id int64) (DeadLetterDetail, error) {
	d, err := o.findDeadLetter(ctx, scope, id)
	if err != nil {
		return DeadLetterDetail{}, err
	}
	detail := DeadLetterDetail{DeadLetter: d}
	var value []byte
	if err := o.pool.QueryRow(ctx, deadLetterSQL, id).Scan(&detail.Key, &detail.Headers, &value); err != nil {
		return DeadLetterDetail{}, fmt.Errorf("load dead letter %d: %w", id, err)
	}
	detail.Payload = Payload{State: PayloadKept, Body: value}
	if detail.Headers[envelope.HeaderClaim] != "" {
		if inboxID, err := strconv.ParseInt(d.InboxID, 10, 64); err == nil {
			detail.Payload, err = o.payload(ctx, inboxID, d.TenantID)
			if err != nil {
				return DeadLetterDetail{}, err
			}
		}
	}
	return detail, nil
}

// DeadLetterSummary returns dead letter id as a list shows it, without its
// record: what a replay's confirmation needs, and not a payload read.
func (o *Operator) DeadLetterSummary(ctx context.Context, scope *Scope, id int64) (DeadLetter, error) {
	return o.findDeadLetter(ctx, scope, id)
}

// findDeadLetter is dead letter id if the scope sees it.
func (o *Operator) findDeadLetter(ctx context.Context, scope *Scope, id int64) (DeadLetter, error) {
	w := &where{}
	w.add("d.id = %s", id)
	if t := scope.tenant(); t != nil {
		w.add("d.headers->>'ce_tenantid' = %s", *t)
	}
	letters, err := o.deadLetters(ctx, w, "", 1)
	if err != nil {
		return DeadLetter{}, err
	}
	if len(letters) == 0 {
		return DeadLetter{}, notFound("dead letter", id)
	}
	return letters[0], nil
}

// ReplayResult is what a replay did: the letters applied again, in order,
// and the one it stopped at (0: none).
type ReplayResult struct {
	Replayed []int64 `json:"replayed"`
	FailedID int64   `json:"failed_id,omitempty"`
}

// ReplayDeadLetter applies dead letter id again through its group's own
// idempotent handler and marks it replayed, in one transaction
// (consumers.ReplayDeadLetter). A letter replayed before is
// consumers.ErrAlreadyReplayed; one that fails again for good is a
// ReplayError (ErrReplayFailed) with the reason, and stays pending.
func (o *Operator) ReplayDeadLetter(ctx context.Context, scope *Scope, id int64) error {
	if _, err := o.findDeadLetter(ctx, scope, id); err != nil {
		return err
	}
	return failedAgain(id, consumers.ReplayDeadLetter(ctx, o.pool, id, o.handlerOf), nil)
}

// ReplayDeadLetters replays every pending letter f selects (Replayed,
// After and Limit are ignored), oldest first: the order they failed in. It
// stops at the first failure, whose letter and the ones after it stay
// pending; the result says how far it got.
func (o *Operator) ReplayDeadLetters(ctx context.Context, scope *Scope, f DeadLetterFilter, log *slog.Logger) (ReplayResult, error) {
	f.Replayed, f.After, f.Limit = false, "", 0
	if f.Group == "" && f.TenantID == "" && f.Reason == "" && f.Since.IsZero() && f.Until.IsZero() {
		return ReplayResult{}, invalid("filter", "name at least a group, tenant, reason or time range: replaying every dead letter at once is never what is meant")
	}
	w, err := deadLetterWhere(scope, f)
	if err != nil {
		return ReplayResult{}, err
	}
	letters, err := o.deadLetters(ctx, w, "ASC", 0)
	if err != nil {
		return ReplayResult{}, err
	}
	var res ReplayResult
	for _, d := range letters {
		err := consumers.ReplayDeadLetter(ctx, o.pool, d.ID, o.handlerOf)
		if errors.Is(err, consumers.ErrAlreadyReplayed) {
			continue // replayed by someone else since the list was read
		}
		if err != nil {
			res.FailedID = d.ID
			return res, failedAgain(d.ID, err, res.Replayed)
		}
		log.InfoContext(ctx, "dead letter replayed", slog.Int64("id", d.ID), slog.String("group", d.Group),
			slog.String("event_id", d.EventID), slog.String("tenant_id", d.TenantID))
		res.Replayed = append(res.Replayed, d.ID)
	}
	return res, nil
}

func (o *Operator) handlerOf(group string) (consumers.Handler, error) {
	spec, ok := groups.Find(o.cfg.Topics, o.cfg.Groups, group)
	if !ok {
		return nil, fmt.Errorf("no consumer group %s here (topic prefix %s; the dispatcher needs its URL): %w",
			group, o.cfg.Topics.Resource(""), notFound("consumer group", group))
	}
	return spec.Handler, nil
}
