package operate

import (
	"context"
	_ "embed"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/store/inbox"
)

//go:embed sql/search.sql
var searchSQL string

// Event is an inbox row: one accepted event key, without its payload.
type Event struct {
	ID            int64        `json:"id"`
	TenantID      string       `json:"tenant_id"`
	SourceID      string       `json:"source_id"`
	SourceAccount string       `json:"source_account"`
	EventID       string       `json:"event_id"`
	EventType     string       `json:"event_type"`
	ObjectType    string       `json:"object_type"`
	ObjectID      string       `json:"object_id"`
	EventTime     *time.Time   `json:"event_time,omitempty"`
	ReceivedAt    time.Time    `json:"received_at"`
	Status        inbox.Status `json:"status"`
	Reason        string       `json:"reason,omitempty"`
	ErasedAt      *time.Time   `json:"erased_at,omitempty"`
}

func scanEvent(r pgx.CollectableRow) (Event, error) {
	var e Event
	err := r.Scan(&e.ID, &e.TenantID, &e.SourceID, &e.SourceAccount, &e.EventID, &e.EventType, &e.ObjectType,
		&e.ObjectID, &e.EventTime, &e.ReceivedAt, &e.Status, &e.Reason, &e.ErasedAt)
	return e, err
}

// SearchFilter selects inbox rows; empty fields select everything. A
// search must name something selective (an event or object id, a tenant
// or source, a status other than published), a time range (Since), or
// nothing at all (the newest rows): one over every tenant's deliveries by
// a type or status alone would read the whole inbox.
type SearchFilter struct {
	EventID   string       `json:"event_id,omitempty"`   // the provider's event id
	TenantID  string       `json:"tenant_id,omitempty"`  //
	SourceID  string       `json:"source_id,omitempty"`  //
	EventType string       `json:"event_type,omitempty"` // as stored: "stripe.invoice.paid"
	ObjectID  string       `json:"object_id,omitempty"`  // e.g. an invoice id
	Status    inbox.Status `json:"status,omitempty"`
	// Since and Until bound received_at: Since <= received_at < Until.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// After is a page's Next; Limit defaults to DefaultLimit.
	After string `json:"after,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

var statuses = []inbox.Status{inbox.StatusPublished, inbox.StatusUnhandled, inbox.StatusQuarantined, inbox.StatusWaiting}

// Search lists the inbox rows f selects, newest first (received_at, then
// id; by id alone when f names nothing and the caller sees every tenant),
// a page at a time (keyset: a page costs the same however deep).
func (o *Operator) Search(ctx context.Context, scope *Scope, f SearchFilter) (Page[Event], error) {
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return Page[Event]{}, err
	}
	w, err := searchWhere(scope, f)
	if err != nil {
		return Page[Event]{}, err
	}
	// Nothing named over every tenant: the newest rows by id, the primary
	// key's order, which costs a page whatever the inbox holds (by
	// received_at, its BRIN index would have the whole window read and
	// sorted: the console's default, the last hour, was 50,000 rows of
	// 1,000,000). Ids follow received_at but for transactions in flight.
	byID := scope == nil && unnamed(f)
	order := " ORDER BY i.received_at DESC, i.id DESC LIMIT "
	if byID {
		order = " ORDER BY i.id DESC LIMIT "
	}
	if f.After != "" {
		at, id, err := decodeCursor(f.After)
		if err != nil {
			return Page[Event]{}, err
		}
		if byID {
			w.add("i.id < %s", id)
		} else {
			w.add("i.received_at <= %s AND (i.received_at < %s OR i.id < %s)", at, at, id)
		}
	}
	q := searchSQL + w.String() + order + strconv.Itoa(limit+1)
	rows, err := o.pool.Query(ctx, q, w.args...)
	if err != nil {
		return Page[Event]{}, fmt.Errorf("search inbox: %w", err)
	}
	events, err := pgx.CollectRows(rows, scanEvent)
	if err != nil {
		return Page[Event]{}, fmt.Errorf("search inbox: %w", err)
	}
	return page(events, limit, func(e Event) string { return encodeCursor(e.ReceivedAt, e.ID) }), nil
}

func searchWhere(scope *Scope, f SearchFilter) (*where, error) {
	if err := validateSearch(scope, f); err != nil {
		return nil, err
	}
	w := &where{}
	if t := scope.tenant(); t != nil {
		w.add("i.tenant_id = %s", *t)
	}
	if f.SourceID != "" {
		// The source's tenant too, so the tenant's index serves a search
		// by source alone.
		w.add("i.source_id = %s AND i.tenant_id = (SELECT tenant_id FROM sources WHERE id = %s)", f.SourceID, f.SourceID)
	}
	w.equal("i.tenant_id", f.TenantID)
	// In the index's collation (migrations/00037), the only one it serves.
	w.equal(`i.event_id COLLATE "C"`, f.EventID)
	w.equal("i.object_id", f.ObjectID)
	w.equal("i.event_type", f.EventType)
	if f.Status != "" {
		// A literal (it is one of statuses), so the planner can prove
		// status <> 'published' and use the partial index of the others.
		w.clauses = append(w.clauses, "i.status = '"+string(f.Status)+"'")
	}
	w.timeRange("i.received_at", f.Since, f.Until)
	return w, nil
}

func validateSearch(scope *Scope, f SearchFilter) error {
	if err := checkUUID("tenant_id", f.TenantID); err != nil {
		return err
	}
	if err := checkUUID("source_id", f.SourceID); err != nil {
		return err
	}
	if f.Status != "" && !slices.Contains(statuses, f.Status) {
		return invalid("status", "%q is none of %v", f.Status, statuses)
	}
	if !f.Until.IsZero() && !f.Since.IsZero() && !f.Until.After(f.Since) {
		return invalid("until", "must be after since")
	}
	if !selective(scope, f) {
		return invalid("filter", "name an event id, object id, tenant, source, a status other than published, a time range (since), or nothing (the newest events)")
	}
	return nil
}

// selective says f names something an index finds few rows by, or a
// time range, or the caller's scope does, or nothing at all (the newest
// rows, by id).
func selective(scope *Scope, f SearchFilter) bool {
	keyed := f.EventID != "" || f.ObjectID != "" || f.TenantID != "" || f.SourceID != ""
	unsettled := f.Status != "" && f.Status != inbox.StatusPublished
	return scope != nil || keyed || unsettled || !f.Since.IsZero() || unnamed(f)
}

// unnamed says f selects every row: it names no filter, only a page.
func unnamed(f SearchFilter) bool {
	f.After, f.Limit = "", 0
	return f == SearchFilter{}
}

// A cursor is the last row's (received_at, id), opaque to callers.
func encodeCursor(at time.Time, id int64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%d", at.UnixNano(), id))
}

func decodeCursor(s string) (time.Time, int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, 0, invalid("cursor", "not a cursor this API returned")
	}
	nanos, id, ok := strings.Cut(string(raw), ".")
	n, err1 := strconv.ParseInt(nanos, 10, 64)
	i, err2 := strconv.ParseInt(id, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return time.Time{}, 0, invalid("cursor", "not a cursor this API returned")
	}
	return time.Unix(0, n).UTC(), i, nil
}
