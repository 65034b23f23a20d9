// Package dispatch hands second-hop intents (the e-mails and alerts other
// handlers write to the notifications topic) to the deployment's own
// endpoint, the operator's service at --dispatch-url: one delivery per
// intent, sent by the deliverer (consumers/delivery) like any tenant
// endpoint's, in order per key, retried with backoff, signed, and never
// holding this group's partitions for an HTTP call.
//
// The request keeps what the service has always received: the intent's
// ce_id (derived from the business key of the effect that caused it) as
// both the Idempotency-Key header and the webhook-id, a Standard Webhooks
// signature with the --dispatch-secret. Delivery is at least once; the
// effect (one e-mail) is exactly once with the service deduplicating on
// that key, as Stripe's and most e-mail APIs do.
//
// Upgrade from the dispatcher that called the service itself: this is the
// same consumer group, so it goes on from the same offsets, and it skips
// every intent dispatch_deliveries holds as sent (within the key horizon):
// nothing is sent twice, nothing is skipped.
package dispatch

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

//go:embed sql/sent.sql
var sentSQL string

// Topic is the suffix of the topic the dispatcher consumes.
const Topic = "notifications"

// Config says where intents go.
type Config struct {
	// URL receives one POST per intent; empty turns the dispatcher off.
	// The operator's, so the deliverer's address rules do not apply to it.
	URL string
	// Secret signs every request (Standard Webhooks, "whsec_" + base64 of
	// the key); required with URL.
	Secret string
	// Timeout bounds one request. Default 10s.
	Timeout time.Duration
	// Operational sends the deployment's endpoint every tenant's
	// operational events (sluice.endpoint.*) as well, written by the
	// fan-out (consumers/destinations): the operator hears of endpoints
	// failing, disabled and recovered. Off: intents only, as before.
	Operational bool
}

// Validate refuses a configuration that could not send a signed request.
func (c Config) Validate() error {
	if c.URL == "" {
		if c.Operational {
			return errors.New("dispatch: SLUICE_DISPATCH_OPERATIONAL needs SLUICE_DISPATCH_URL")
		}
		return nil
	}
	if _, err := standardwebhooks.Key(c.Secret); err != nil {
		return fmt.Errorf("dispatch: SLUICE_DISPATCH_SECRET: %w", err)
	}
	return nil
}

// Handler writes each intent's delivery to the deployment's endpoint.
type Handler struct{ endpoint string }

// New builds the dispatcher of the deployment whose topic prefix is
// prefix: its deliveries name that deployment's endpoint.
func New(prefix string) *Handler { return &Handler{endpoint: endpoints.DeploymentEndpointID(prefix)} }

// Prepare implements consumers.Handler: an intent with no key or no body
// can never be sent.
func (*Handler) Prepare(_ context.Context, rec *consumers.Record) error {
	if rec.Event.ID == "" || rec.Value == nil {
		return consumers.Permanentf("intent without idempotency key or body")
	}
	return nil
}

// Begin implements consumers.Handler.
func (h *Handler) Begin(tx pgx.Tx) consumers.Batch { return &batch{tx: tx, endpoint: h.endpoint} }

type batch struct {
	tx       pgx.Tx
	endpoint string
}

// Apply implements consumers.Batch: the batch's deliveries in one
// statement, but those the dispatcher of before sent itself.
func (b *batch) Apply(ctx context.Context, recs []consumers.Record) error {
	keys := make([]string, len(recs))
	for i := range recs {
		keys[i] = recs[i].Event.ID
	}
	rows, err := b.tx.Query(ctx, sentSQL, keys)
	if err != nil {
		return fmt.Errorf("dispatch: intents sent before: %w", err)
	}
	sent, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("dispatch: intents sent before: %w", err)
	}
	before := make(map[string]bool, len(sent))
	for _, k := range sent {
		before[k] = true
	}
	var out endpoints.Fanout
	for i := range recs {
		if rec := &recs[i]; !before[rec.Event.ID] {
			out.Add(delivery(b.endpoint, rec))
		}
	}
	return out.Write(ctx, b.tx)
}

// Settle implements consumers.Batch.
func (*batch) Settle(context.Context) error { return nil }

// delivery is an intent's delivery to the deployment's endpoint: its body
// kept in the row (an intent has no inbox row), its key the webhook-id.
func delivery(endpoint string, rec *consumers.Record) endpoints.NewDelivery {
	ev := rec.Event
	var at *time.Time
	if !ev.Time.IsZero() {
		at = &ev.Time
	}
	return endpoints.NewDelivery{EndpointID: endpoint, TenantID: ev.TenantID, WebhookID: ev.ID,
		Key: string(rec.Key), Payload: rec.Value, EventID: ev.ID, EventType: ev.Type, Source: ev.Source, Subject: ev.Subject,
		EventTime: at, TraceParent: ev.TraceParent, ContentType: "application/json",
		Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset, AcceptedAt: rec.Timestamp}
}

var _ consumers.Handler = (*Handler)(nil)
