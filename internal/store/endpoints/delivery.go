package endpoints

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/refusal"
)

// A delivery is one event on its way to one endpoint (a deliveries row):
// the fan-out writes it pending, the deliverer sends it until it is
// delivered or, past the retry horizon, dead. Operators and tenants read
// them here, retry one, or replay an endpoint's window.

var (
	//go:embed sql/delivery_columns.sql
	deliveryColumns string
	//go:embed sql/delivery_attempts.sql
	deliveryAttemptsSQL string
	//go:embed sql/delivery_retry.sql
	deliveryRetrySQL string
	//go:embed sql/delivery_replay.sql
	deliveryReplaySQL string
	//go:embed sql/delivery_replay_count.sql
	deliveryReplayCountSQL string
	//go:embed sql/delivery_tenant.sql
	deliveryTenantSQL string
	//go:embed sql/replay_endpoint.sql
	replayEndpointSQL string
)

// DeliveryState is where a delivery stands.
type DeliveryState string

const (
	// Pending: to send, at next_at (or being sent, under a deliverer's
	// lease).
	Pending DeliveryState = "pending"
	// Delivered: the endpoint answered 2xx.
	Delivered DeliveryState = "delivered"
	// Dead: given up after the retry horizon; a retry or a replay sends it
	// again.
	Dead DeliveryState = "dead"
)

// Valid reports whether s is one of the states.
func (s DeliveryState) Valid() bool { return s == Pending || s == Delivered || s == Dead }

// Delivery is one delivery as operators and tenants see it: never its body
// (the event's payload, read through the event).
type Delivery struct {
	ID           int64         `json:"id"`
	EndpointID   string        `json:"endpoint_id"`
	TenantID     string        `json:"tenant_id"`
	WebhookID    string        `json:"webhook_id" doc:"The webhook-id header: the same on every retry, replay and rewind."`
	EventID      string        `json:"event_id"`
	EventType    string        `json:"event_type"`
	PartitionKey string        `json:"partition_key" doc:"The resource key: an ordered endpoint gets a key's deliveries in order."`
	State        DeliveryState `json:"state" enum:"pending,delivered,dead"`
	Attempts     int           `json:"attempts" doc:"Requests made so far."`
	NextAt       *time.Time    `json:"next_at,omitempty" doc:"When the next request is due (pending only)."`
	CreatedAt    time.Time     `json:"created_at"`
	AcceptedAt   *time.Time    `json:"accepted_at,omitempty" doc:"When ingest accepted the event."`
	DeliveredAt  *time.Time    `json:"delivered_at,omitempty"`
	LastStatus   int           `json:"last_status,omitempty" doc:"The endpoint's HTTP status on the latest request; absent when none answered."`
	LastError    string        `json:"last_error,omitempty"`
	LatencyMS    *int          `json:"latency_ms,omitempty" doc:"The latest request's latency."`
	InboxID      *int64        `json:"inbox_id,omitempty" doc:"The event's inbox id (its trail); absent for events with no inbox row (the built-in intents, test events)."`
	// RulesVersion is the version of the endpoint's rules the fan-out
	// created it under (its filter expression took the event then);
	// SentRulesVersion the version whose transformation the latest send
	// used. Absent: written by a release before versions.
	RulesVersion     *int64 `json:"rules_version,omitempty" doc:"The version of the endpoint's rules (filter expression and transformation) the delivery was created under: its filter took the event then. Absent for deliveries written before versions."`
	SentRulesVersion *int64 `json:"sent_rules_version,omitempty" doc:"The version of the endpoint's rules whose transformation the latest request used (a retry or a replay sends with the rules current then). Absent until a request is made."`
	// Topic, Partition and Offset are the Kafka record the fan-out read:
	// where the relay published the event.
	Topic     string `json:"topic" doc:"The Kafka record the fan-out read the event from: where the relay published it."`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// History is filled by Delivery (one delivery), not by a list.
	History []Attempt `json:"history,omitempty" doc:"Every request, oldest first: the failed ones, and for a delivered delivery its successful one (one delivery's view only)."`
}

// DeliveryFilter selects the deliveries a list shows; every field is
// optional.
type DeliveryFilter struct {
	// TenantID is the scope: a scoped caller passes its own.
	TenantID   string
	EndpointID string
	State      DeliveryState
	EventID    string
	InboxID    int64
	// Since and Until bound created_at: since <= created_at < until.
	Since, Until time.Time
	// After is the cursor of the previous page (its last id); the list is
	// newest first, as the other operator lists are.
	After string
	// Limit is the page size: 50 when 0, at most 500.
	Limit int
}

// The bounds of a page of deliveries.
const (
	DefaultDeliveryPage = 50
	MaxDeliveryPage     = 500
)

// conds is the WHERE clause of the filters a list names, and only those,
// so each combination gets a plan that uses its index.
type conds struct {
	sql  []string
	args []any
}

// and appends clause with its one argument as the next placeholder ($N).
func (c *conds) and(clause string, arg any) {
	c.args = append(c.args, arg)
	c.sql = append(c.sql, strings.ReplaceAll(clause, "?", "$"+strconv.Itoa(len(c.args))))
}

func (f DeliveryFilter) conds() (conds, int, error) {
	var c conds
	limit, err := f.limit()
	if err != nil {
		return c, 0, err
	}
	if err := f.ids(&c); err != nil {
		return c, 0, err
	}
	if f.EventID != "" {
		c.and("d.event_id = ?", f.EventID)
	}
	if f.InboxID != 0 {
		c.and("d.inbox_id = ?", f.InboxID)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return c, 0, refusal.InvalidField("until", "must be after since")
	}
	if !f.Since.IsZero() {
		c.and("d.created_at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		c.and("d.created_at < ?", f.Until)
	}
	if f.After != "" {
		after, err := strconv.ParseInt(f.After, 10, 64)
		if err != nil || after < 1 {
			return c, 0, refusal.InvalidField("cursor", "not a cursor this list returned")
		}
		c.and("d.id < ?", after)
	}
	return c, limit, nil
}

func (f DeliveryFilter) limit() (int, error) {
	switch {
	case f.Limit == 0:
		return DefaultDeliveryPage, nil
	case f.Limit < 0 || f.Limit > MaxDeliveryPage:
		return 0, refusal.InvalidField("limit", "must be between 1 and %d", MaxDeliveryPage)
	}
	return f.Limit, nil
}

// ids adds the tenant, endpoint and state the filter names, each checked.
func (f DeliveryFilter) ids(c *conds) error {
	for _, id := range []struct{ field, v string }{{"tenant_id", f.TenantID}, {"endpoint_id", f.EndpointID}} {
		if id.v == "" {
			continue
		}
		if !canonical(id.v) {
			return refusal.InvalidField(id.field, "must be a canonical uuid (lowercase, 8-4-4-4-12)")
		}
		c.and("d."+id.field+" = ?", id.v)
	}
	if f.TenantID != "" {
		// The deployment's own endpoint carries tenants' intents, but is
		// the operator's: no tenant lists its deliveries.
		c.sql = append(c.sql, "EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id AND e.tenant_id IS NOT NULL)")
	}
	if f.State != "" {
		if !f.State.Valid() {
			return refusal.InvalidField("state", "must be pending, delivered or dead")
		}
		c.and("d.state = ?", string(f.State))
	}
	return nil
}

// ListDeliveries returns one page of the deliveries f selects, newest
// first, and the cursor of the next page ("" on the last).
func (s Store) ListDeliveries(ctx context.Context, f DeliveryFilter) ([]Delivery, string, error) {
	c, limit, err := f.conds()
	if err != nil {
		return nil, "", err
	}
	query := deliveryColumns
	if len(c.sql) > 0 {
		query += " WHERE " + strings.Join(c.sql, " AND ")
	}
	query += fmt.Sprintf(" ORDER BY d.id DESC LIMIT %d", limit+1)
	rows, err := s.Pool.Query(ctx, query, c.args...)
	if err != nil {
		return nil, "", fmt.Errorf("list deliveries: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return nil, "", fmt.Errorf("list deliveries: %w", err)
	}
	if len(list) <= limit {
		return list, "", nil
	}
	list = list[:limit]
	return list, strconv.FormatInt(list[limit-1].ID, 10), nil
}

func scanDelivery(r pgx.CollectableRow) (Delivery, error) {
	var (
		d      Delivery
		status *int
		lastEr *string
	)
	err := r.Scan(&d.ID, &d.EndpointID, &d.TenantID, &d.WebhookID, &d.EventID, &d.EventType, &d.PartitionKey, &d.State,
		&d.Attempts, &d.NextAt, &d.CreatedAt, &d.AcceptedAt, &d.DeliveredAt, &status, &lastEr, &d.LatencyMS, &d.InboxID,
		&d.RulesVersion, &d.SentRulesVersion, &d.Topic, &d.Partition, &d.Offset)
	if status != nil {
		d.LastStatus = *status
	}
	if lastEr != nil {
		d.LastError = *lastEr
	}
	if d.State != Pending {
		d.NextAt = nil // a settled delivery's next_at means nothing
	}
	return d, err
}

// Delivery returns delivery id with its attempts, oldest first: the failed
// ones (delivery_attempts) and, for a delivered one, its successful
// attempt, which the deliverer keeps on the row itself.
func (s Store) Delivery(ctx context.Context, id int64) (Delivery, error) {
	if id < 1 {
		return Delivery{}, refusal.NoSuch("delivery", id)
	}
	rows, err := s.Pool.Query(ctx, deliveryColumns+" WHERE d.id = $1", id)
	if err != nil {
		return Delivery{}, fmt.Errorf("read delivery %d: %w", id, err)
	}
	d, err := pgx.CollectExactlyOneRow(rows, scanDelivery)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, refusal.NoSuch("delivery", id)
	}
	if err != nil {
		return d, fmt.Errorf("read delivery %d: %w", id, err)
	}
	byDelivery, err := s.attempts(ctx, []int64{id})
	if err != nil {
		return d, err
	}
	d.History = WithSuccess(d, byDelivery[id])
	return d, nil
}

// MaxEventDeliveries bounds the deliveries EventDeliveries reads: one per
// endpoint of the event's tenant.
const MaxEventDeliveries = 1000

// EventDeliveries returns the deliveries of inbox row inboxID, one per
// endpoint it matched, each with its attempts (an event's trail).
func (s Store) EventDeliveries(ctx context.Context, inboxID int64) ([]Delivery, error) {
	rows, err := s.Pool.Query(ctx, deliveryColumns+fmt.Sprintf(" WHERE d.inbox_id = $1 ORDER BY d.endpoint_id, d.id LIMIT %d", MaxEventDeliveries), inboxID)
	if err != nil {
		return nil, fmt.Errorf("read the deliveries of event %d: %w", inboxID, err)
	}
	list, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil || len(list) == 0 {
		return list, err
	}
	byDelivery, err := s.attempts(ctx, ids(list))
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].History = WithSuccess(list[i], byDelivery[list[i].ID])
	}
	return list, nil
}

func ids(ds []Delivery) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// attempts reads the failed attempts of the deliveries ids, oldest first.
func (s Store) attempts(ctx context.Context, ids []int64) (map[int64][]Attempt, error) {
	rows, err := s.Pool.Query(ctx, deliveryAttemptsSQL, ids)
	if err != nil {
		return nil, fmt.Errorf("read attempts: %w", err)
	}
	defer rows.Close()
	out := map[int64][]Attempt{}
	for rows.Next() {
		var (
			id     int64
			a      Attempt
			status *int
			lat    *int
		)
		if err := rows.Scan(&id, &a.Attempt, &a.At, &status, &lat, &a.ErrorClass, &a.Error, &a.Answer, &a.RulesVersion); err != nil {
			return nil, fmt.Errorf("read attempts: %w", err)
		}
		if status != nil {
			a.Status = *status
		}
		if lat != nil {
			a.LatencyMS = *lat
		}
		out[id] = append(out[id], a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read attempts: %w", err)
	}
	return out, nil
}

// WithSuccess is a delivery's attempts: the failed ones it is given and,
// when d is delivered, the successful one, made from the row (attempt
// number d.Attempts, its status, latency and time), since the success path
// writes no attempt row.
func WithSuccess(d Delivery, failed []Attempt) []Attempt {
	if d.State != Delivered || d.Attempts < 1 {
		return failed
	}
	ok := Attempt{Attempt: d.Attempts, Status: d.LastStatus, RulesVersion: deref(d.SentRulesVersion)}
	if d.DeliveredAt != nil {
		ok.At = *d.DeliveredAt
	}
	if d.LatencyMS != nil {
		ok.LatencyMS = *d.LatencyMS
	}
	return append(failed, ok)
}

// TenantOfDelivery is the tenant delivery id belongs to (the admin API's
// owner look-up).
func (s Store) TenantOfDelivery(ctx context.Context, id int64) (string, error) {
	var tenant string
	err := s.Pool.QueryRow(ctx, deliveryTenantSQL, id).Scan(&tenant)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", refusal.NoSuch("delivery", id)
	}
	if err != nil {
		return "", fmt.Errorf("read delivery %d: %w", id, err)
	}
	return tenant, nil
}
