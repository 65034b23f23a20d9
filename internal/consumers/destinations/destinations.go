// Package destinations fans every published event out into deliveries: one
// row per (event, enabled endpoint of its tenant whose filters match its
// type and whose expression, if it has one, yields true over the event),
// written in the batch's transaction, so the offset commits only
// after the rows exist and a rewind inserts nothing twice. It never calls an
// endpoint: the deliverer (consumers/delivery) claims the rows, so no
// partition waits on an HTTP call and each endpoint's backlog is its own.
//
// An event's webhook-id is derived from the endpoint and the event's
// identity (its inbox row, or for an event with none, its source and id),
// so it is the same on every retry, replay and rewind.
//
// An endpoint's expression (internal/eventfilter) is compiled once per
// read of the endpoints, evaluated once per event it could take, over the
// event's envelope and body (a claimed body is loaded from its inbox row,
// once per event, only when an expression needs it). An evaluation that
// fails or exceeds the cost limit is "not taken", counted and logged: the
// fan-out never stops for an expression. A rewind evaluates again with the
// expressions of that moment: an event one took since is not written twice
// (its webhook-id is unique), one it declines now is not removed.
//
// Operational events (sluice.endpoint.*, written by the deliverer) are
// matched like any event of their tenant, except that none is written for
// the endpoint it is about: an endpoint failing never receives news of
// itself, so it cannot feed on them. With Deployment set, each also goes to
// the deployment's own endpoint.
package destinations

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/eventfilter"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// Refresh is how stale the endpoints the fan-out matches may be by
// default: an endpoint created, changed or disabled is seen within it.
const Refresh = 5 * time.Second

// Handler is the fan-out's consumers.Handler.
type Handler struct {
	consumers.Local
	// Deployment is the deployment's own endpoint (its id) when it takes
	// every tenant's operational events (--dispatch-operational); "":
	// none.
	Deployment string
	subs       *Subscriptions
	log        *slog.Logger
	verdict    *prometheus.CounterVec
}

// Telemetry is where the fan-out reports its expressions' verdicts; zero
// fields report nowhere.
type Telemetry struct {
	Log        *slog.Logger
	Registerer prometheus.Registerer
}

// New builds the fan-out over the endpoints subs reads.
func New(subs *Subscriptions, tel Telemetry) *Handler {
	h := &Handler{subs: subs, log: tel.Log,
		verdict: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_destination_filter_evaluations_total",
			Help: "Endpoint filter expressions evaluated at fan-out, by verdict: taken, declined, failed (an error over the event: not taken), over_cost (stopped at the cost limit: not taken)."},
			[]string{"verdict"})}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if tel.Registerer != nil {
		tel.Registerer.MustRegister(h.verdict)
	}
	if subs != nil {
		subs.log = h.log
	}
	return h
}

// Begin implements consumers.Handler.
func (h *Handler) Begin(tx pgx.Tx) consumers.Batch { return &batch{h: h, tx: tx} }

type batch struct {
	h  *Handler
	tx pgx.Tx
}

// Apply implements consumers.Batch: one statement for the batch.
func (b *batch) Apply(ctx context.Context, recs []consumers.Record) error {
	ix, err := b.h.subs.Index(ctx)
	if err != nil {
		return err
	}
	var rows endpoints.Fanout
	var matched []endpoints.Candidate
	for i := range recs {
		rec := &recs[i]
		if rec.Event.TenantID == "" {
			continue
		}
		matched = b.h.candidates(ix, matched[:0], rec)
		var vars *eventfilter.Vars // made once per event, when an expression asks
		for _, c := range matched {
			if c.Program != nil {
				if vars == nil {
					v, err := b.vars(ctx, rec)
					if err != nil {
						return err
					}
					vars = &v
				}
				if !b.h.takes(c, vars, rec) {
					continue
				}
			}
			d := delivery(c.EndpointID, rec)
			d.RulesVersion = c.RulesVersion
			rows.Add(d)
		}
	}
	return rows.Write(ctx, b.tx)
}

// candidates appends to dst the endpoints whose filters take rec's type:
// its tenant's, but the one an operational event is about, and the
// deployment's for an operational event when it takes them.
func (h *Handler) candidates(ix *endpoints.Index, dst []endpoints.Candidate, rec *consumers.Record) []endpoints.Candidate {
	ev := rec.Event
	dst = ix.Match(dst, ev.TenantID, ev.Type)
	if !endpoints.IsOperational(ev.Type) {
		return dst
	}
	dst = slices.DeleteFunc(dst, func(c endpoints.Candidate) bool { return endpoints.AboutEndpoint(ev.Type, ev.Subject, c.EndpointID) })
	if h.Deployment != "" {
		dst = append(dst, endpoints.Candidate{EndpointID: h.Deployment})
	}
	return dst
}

// vars lays out rec's variables, its body loaded if it travelled by claim.
// A body no longer kept leaves the expression a null body: the delivery
// would have nothing to send either.
func (b *batch) vars(ctx context.Context, rec *consumers.Record) (eventfilter.Vars, error) {
	body, err := rec.Body(ctx, b.tx)
	if err != nil && !consumers.IsPermanent(err) {
		return eventfilter.Vars{}, err
	}
	ev := rec.Event
	return eventfilter.NewVars(eventfilter.Event{ID: ev.ID, Type: ev.Type, Source: ev.Source, Subject: ev.Subject, Time: ev.Time,
		TenantID: ev.TenantID, SourceAccount: ev.SourceAccount, Body: body}), nil
}

// takes evaluates c's expression over the event and counts its verdict;
// one that could not be evaluated is logged, with the event's key.
func (h *Handler) takes(c endpoints.Candidate, vars *eventfilter.Vars, rec *consumers.Record) bool {
	verdict, err := c.Program.Eval(*vars)
	h.verdict.WithLabelValues(verdict.String()).Inc()
	if verdict == eventfilter.OverCost {
		h.log.Warn("filter expression stopped at its cost limit: event not taken", slog.String("event", "destinations.filter_over_cost"),
			slog.String("endpoint_id", c.EndpointID), slog.String("tenant_id", rec.Event.TenantID), slog.String("event_id", rec.Event.ID),
			slog.String("source", rec.Event.Source), slog.Any("error", err))
	}
	if verdict == eventfilter.Failed {
		h.log.Debug("filter expression failed over the event: not taken", slog.String("endpoint_id", c.EndpointID),
			slog.String("event_id", rec.Event.ID), slog.String("source", rec.Event.Source), slog.Any("error", err))
	}
	return verdict == eventfilter.Taken
}

// Settle implements consumers.Batch.
func (b *batch) Settle(context.Context) error { return nil }

// delivery is rec's delivery to endpoint. A body in the record is kept
// only when no inbox row holds it: an inbox row's body is loaded when it is
// sent.
func delivery(endpoint string, rec *consumers.Record) endpoints.NewDelivery {
	ev := rec.Event
	var inbox *int64
	if id, err := strconv.ParseInt(ev.InboxID, 10, 64); err == nil {
		inbox = &id
	}
	var payload []byte
	if inbox == nil {
		payload = rec.Value
	}
	var at *time.Time
	if !ev.Time.IsZero() {
		at = &ev.Time
	}
	return endpoints.NewDelivery{EndpointID: endpoint, TenantID: ev.TenantID, WebhookID: WebhookID(endpoint, ev.InboxID, ev.Source, ev.ID),
		Key: string(rec.Key), InboxID: inbox, Payload: payload, EventID: ev.ID, EventType: ev.Type, Source: ev.Source,
		Subject: ev.Subject, EventTime: at, TraceParent: ev.TraceParent, ContentType: cmp.Or(ev.ContentType, "application/json"),
		Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset, AcceptedAt: rec.Timestamp}
}

// WebhookID is the id an endpoint sees for an event, on every attempt:
// "msg_" and 26 characters of a digest of the endpoint and the event's
// identity (its inbox row, or its source and id when it has none).
func WebhookID(endpointID, inboxID, source, eventID string) string {
	identity := "inbox/" + inboxID
	if inboxID == "" {
		identity = "event/" + source + "/" + eventID
	}
	sum := sha256.Sum256([]byte(endpointID + "\x00" + identity))
	return "msg_" + base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:])[:26]
}

// Subscriptions is the fan-out's view of the enabled endpoints, read again
// once it is refresh old.
type Subscriptions struct {
	load    func(context.Context) ([]endpoints.Subscription, error)
	refresh time.Duration
	now     func() time.Time
	log     *slog.Logger // the Handler's

	mu     sync.Mutex
	ix     *endpoints.Index
	readAt time.Time
}

// NewSubscriptions reads the endpoints with load, again once they are
// refresh old (0: for every batch).
func NewSubscriptions(load func(context.Context) ([]endpoints.Subscription, error), refresh time.Duration) *Subscriptions {
	return &Subscriptions{load: load, refresh: refresh, now: time.Now}
}

// Forget drops what was read: the next Index reads afresh. The Gate's
// wiring calls it before the group starts, so the first batch past the
// mark sees the endpoint whose creation started it.
func (s *Subscriptions) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readAt = time.Time{}
}

// Index returns the endpoints as of at most refresh ago. A failed read
// keeps no stale answer past refresh: the batch is retried (transient).
func (s *Subscriptions) Index(ctx context.Context) (*endpoints.Index, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ix != nil && !s.readAt.IsZero() && s.now().Sub(s.readAt) < s.refresh {
		return s.ix, nil
	}
	subs, err := s.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("destinations: %w", err)
	}
	s.ix, s.readAt = endpoints.NewIndex(subs, s.ix), s.now()
	for _, err := range s.ix.Unusable {
		if s.log != nil {
			s.log.Warn("endpoint takes nothing: its filter expression does not compile here", slog.String("event", "destinations.filter_unusable"),
				slog.Any("error", err))
		}
	}
	return s.ix, nil
}
