package operate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

var (
	//go:embed sql/event.sql
	eventSQL string
	//go:embed sql/deliveries.sql
	deliveriesSQL string
	//go:embed sql/effects.sql
	effectsSQL string
	//go:embed sql/effects_branch.sql
	effectsBranchSQL string
	//go:embed sql/sends.sql
	sendsSQL string
	//go:embed sql/corrections.sql
	correctionsSQL string
	//go:embed sql/waiting.sql
	waitingSQL string
)

// Trail is one event's path through Sluice: how it was accepted, every
// delivery of it, what each consumer group did with it and where in Kafka,
// its dead letters, what reconciliation did about it, and its deliveries to
// its tenant's endpoints. It holds no payload (EventPayload reads it).
type Trail struct {
	Event Event `json:"event"`
	// Verification is how the event was authenticated: only verified
	// deliveries are stored, so an inbox row is a verified one.
	Verification Verification `json:"verification"`
	Deliveries   []Delivery   `json:"deliveries"`
	// Effects are the effects on the event's object, by business key,
	// whichever event caused them: "why no credits?" is answered by the
	// grant another event made as well as by this one's.
	Effects     []Effect     `json:"effects"`
	Sends       []Send       `json:"sends"`
	DeadLetters []DeadLetter `json:"dead_letters"`
	// Waiting are its records a consumer group set aside: what their
	// effect needs is held elsewhere (a row another transaction locked),
	// or they follow such a record of their key. They are applied once
	// it is free.
	Waiting     []Waiting    `json:"waiting"`
	Corrections []Correction `json:"corrections"`
	// Destinations are the event's deliveries to its tenant's endpoints,
	// one per endpoint it matched, each with its requests.
	Destinations []EndpointDelivery `json:"destinations"`
	// TakenNow is which of the tenant's enabled endpoints take the event
	// under their filters and expressions as they are now, labelled so:
	// not what the fan-out decided then (Destinations is what it wrote).
	TakenNow []Taker `json:"taken_now_by_todays_endpoints" doc:"Which of the tenant's enabled endpoints take the event under their filters and expressions as they are NOW: a reading of today's endpoints, not what the fan-out decided when the event passed (destinations holds what it wrote)."`
}

// Waiting is one of the event's records a consumer group set aside.
type Waiting struct {
	Group     string    `json:"group"`
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	Reason    string    `json:"reason"`
	Since     time.Time `json:"waiting_since"`
}

// EndpointDelivery is the event's delivery to one endpoint: its state and
// every request made (internal/store/endpoints).
type EndpointDelivery struct {
	endpoints.Delivery
}

// OperationalScheme is the Verification.Scheme of an operational event
// (sluice.endpoint.*): written by Sluice itself, in the transaction of the
// endpoint's change, not received from a sender.
const OperationalScheme = "sluice"

// Verification is the outcome that let the event in.
type Verification struct {
	Outcome string `json:"outcome"` // "verified"
	// Scheme is how: the source's kind (stripe, github, standard_webhooks,
	// hmac signatures; api: a tenant API key; sluice: an operational event,
	// which Sluice wrote itself).
	Scheme string `json:"scheme"`
}

// Delivery is one authenticated delivery attempt: accepted (the first, or
// its status when not published), duplicate or conflict.
type Delivery struct {
	ReceivedAt time.Time `json:"received_at"`
	Outcome    string    `json:"outcome"`
}

// Position is a Kafka record's coordinates; nil fields for effects written
// before they were recorded.
type Position struct {
	Topic     *string `json:"topic,omitempty"`
	Partition *int32  `json:"partition,omitempty"`
	Offset    *int64  `json:"offset,omitempty"`
}

// Effect is one effect on the event's object, as its group's query
// (effect.Group.Trail) says it.
type Effect struct {
	Group string `json:"group"`
	// Kind is the group's word for it: grant, reversal, alert,
	// projection, reservation...
	Kind        string `json:"kind"`
	Operation   string `json:"operation,omitempty"`
	BusinessKey string `json:"business_key"`
	// EventID and InboxID name the event that caused it (for a projection,
	// the event whose version it holds); ThisEvent says it was the trail's.
	EventID     string     `json:"event_id"`
	InboxID     *int64     `json:"inbox_id,omitempty"`
	ThisEvent   bool       `json:"this_event"`
	WorkspaceID string     `json:"workspace_id,omitempty"`
	Credits     int64      `json:"credits,omitempty"`
	State       string     `json:"state,omitempty"`
	Applied     Position   `json:"applied_at"`             // the record the group applied
	ProcessedAt *time.Time `json:"processed_at,omitempty"` // nil: its group keeps no such time
}

// Send is a second-hop delivery the dispatcher made for an effect.
type Send struct {
	IdempotencyKey string    `json:"idempotency_key"`
	Group          string    `json:"group"`
	Topic          string    `json:"topic"`
	Partition      int32     `json:"partition"`
	Offset         int64     `json:"offset"`
	Status         int       `json:"status"`
	SentAt         time.Time `json:"sent_at"`
}

// Correction is what a reconciliation run did about the event.
type Correction struct {
	RunID   int64     `json:"run_id"`
	EventID string    `json:"event_id"`
	Outcome string    `json:"outcome"`
	At      time.Time `json:"at"`
}

// event is inbox row id if the scope sees it, and its source's kind.
func (o *Operator) event(ctx context.Context, scope *Scope, id int64) (eventRow, error) {
	var e eventRow
	err := o.pool.QueryRow(ctx, eventSQL, id, scope.tenant()).Scan(&e.ID, &e.TenantID, &e.SourceID, &e.SourceAccount,
		&e.EventID, &e.EventType, &e.ObjectType, &e.ObjectID, &e.EventTime, &e.ReceivedAt, &e.Status, &e.Reason,
		&e.ErasedAt, &e.kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, notFound("event", id)
	}
	if err != nil {
		return e, fmt.Errorf("load event %d: %w", id, err)
	}
	return e, nil
}

type eventRow struct {
	Event
	kind string
}

// Trail returns the trail of inbox row id (a search's Event.ID).
func (o *Operator) Trail(ctx context.Context, scope *Scope, id int64) (Trail, error) {
	ev, err := o.event(ctx, scope, id)
	if err != nil {
		return Trail{}, err
	}
	t := Trail{Event: ev.Event, Verification: Verification{Outcome: "verified", Scheme: ev.kind}}
	if ev.SourceID == endpoints.OperationalSourceID {
		// An operational event: Sluice wrote it, no sender signed it.
		t.Verification.Scheme = OperationalScheme
	}
	if t.Deliveries, err = collect(ctx, o, deliveriesSQL, []any{id}, func(r pgx.CollectableRow) (Delivery, error) {
		var d Delivery
		return d, r.Scan(&d.ReceivedAt, &d.Outcome)
	}); err != nil {
		return Trail{}, err
	}
	if t.Effects, err = o.effects(ctx, ev); err != nil {
		return Trail{}, err
	}
	if t.Sends, err = o.sends(ctx, t.Effects); err != nil {
		return Trail{}, err
	}
	w := &where{}
	w.add("d.headers->>'sluice_inboxid' = %s", strconv.FormatInt(id, 10))
	if t.DeadLetters, err = o.deadLetters(ctx, w, "ASC", 0); err != nil {
		return Trail{}, err
	}
	if t.Waiting, err = collect(ctx, o, waitingSQL, []any{id}, func(r pgx.CollectableRow) (Waiting, error) {
		var wt Waiting
		return wt, r.Scan(&wt.Group, &wt.Topic, &wt.Partition, &wt.Offset, &wt.Reason, &wt.Since)
	}); err != nil {
		return Trail{}, err
	}
	if t.Corrections, err = collect(ctx, o, correctionsSQL, []any{id}, func(r pgx.CollectableRow) (Correction, error) {
		var c Correction
		return c, r.Scan(&c.RunID, &c.EventID, &c.Outcome, &c.At)
	}); err != nil {
		return Trail{}, err
	}
	if t.Destinations, err = o.destinations(ctx, id); err != nil {
		return Trail{}, err
	}
	if t.TakenNow, err = o.takers(ctx, ev); err != nil {
		return Trail{}, err
	}
	if len(t.Corrections) > 0 {
		t.Verification.Outcome = "entered by reconciliation"
	}
	return t, nil
}

func (o *Operator) destinations(ctx context.Context, inboxID int64) ([]EndpointDelivery, error) {
	ds, err := endpoints.Store{Pool: o.pool}.EventDeliveries(ctx, inboxID)
	if err != nil {
		return nil, fmt.Errorf("trail: %w", err)
	}
	out := make([]EndpointDelivery, len(ds))
	for i, d := range ds {
		out[i] = EndpointDelivery{d}
	}
	return out, nil
}

// effectsQuery is the union of the groups' trail queries (sql/effects.sql),
// "" for none. It is built once, from the binary's own groups.
func effectsQuery(trails []string) string {
	if len(trails) == 0 {
		return ""
	}
	branches := make([]string, len(trails))
	for i, q := range trails {
		q = strings.TrimRight(strings.TrimSpace(q), ";")
		branches[i] = strings.Replace(effectsBranchSQL, "-- the group's query\n", q+"\n", 1)
	}
	return effectsSQL + strings.Join(branches, "UNION ALL\n")
}

func (o *Operator) effects(ctx context.Context, ev eventRow) ([]Effect, error) {
	if ev.ObjectID == "" || o.effectsSQL == "" {
		return nil, nil
	}
	effects, err := collect(ctx, o, o.effectsSQL, []any{ev.SourceID, ev.SourceAccount, ev.ObjectID, ev.TenantID}, func(r pgx.CollectableRow) (Effect, error) {
		var e Effect
		err := r.Scan(&e.Group, &e.Kind, &e.Operation, &e.BusinessKey, &e.EventID, &e.InboxID, &e.WorkspaceID,
			&e.Credits, &e.State, &e.Applied.Topic, &e.Applied.Partition, &e.Applied.Offset, &e.ProcessedAt)
		return e, err
	})
	for i := range effects {
		e := &effects[i]
		e.Group = o.cfg.Topics.Resource(e.Group)
		e.ThisEvent = (e.InboxID != nil && *e.InboxID == ev.ID) || (e.InboxID == nil && e.EventID == ev.EventID)
	}
	return effects, err
}

// sends are the dispatcher's deliveries of the effects' intents: an
// e-mail's key is its grant's business key and "/confirmation-email", an
// alert's is its own business key.
func (o *Operator) sends(ctx context.Context, effects []Effect) ([]Send, error) {
	var keys []string
	for _, e := range effects {
		keys = append(keys, e.BusinessKey, e.BusinessKey+"/confirmation-email")
	}
	if len(keys) == 0 {
		return nil, nil
	}
	return collect(ctx, o, sendsSQL, []any{keys}, func(r pgx.CollectableRow) (Send, error) {
		var s Send
		return s, r.Scan(&s.IdempotencyKey, &s.Group, &s.Topic, &s.Partition, &s.Offset, &s.Status, &s.SentAt)
	})
}

func collect[T any](ctx context.Context, o *Operator, sql string, args []any, scan pgx.RowToFunc[T]) ([]T, error) {
	rows, err := o.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("trail: %w", err)
	}
	out, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("trail: %w", err)
	}
	return out, nil
}
