package ingest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/ingest/provider"
	"github.com/sluicehq/sluice/internal/envelope"
)

// HeaderRecovered marks a record whose event reconciliation recovered from
// the provider's API rather than received as a webhook.
const HeaderRecovered = envelope.HeaderRecovered

// ErrNotReconcilable: the source is unknown, disabled, or of a kind this
// service does not hold.
var ErrNotReconcilable = errors.New("ingest: source cannot be reconciled")

// Reconciled is what became of one recovered event.
type Reconciled struct {
	Outcome Outcome
	InboxID int64
	EventID string
	// Skipped: the event's type has no catalogue entry, so nothing was
	// stored (a webhook of it would only be kept as unhandled; recovering
	// every type a provider lists would fill the inbox with those).
	Skipped bool
}

// Reconcile enters an event reconciliation found for a source through the
// same door as a webhook: read by the source's provider, checked against
// the catalogue, and stored as inbox and outbox rows in one group-commit
// transaction, under the event key a webhook of the same event has. It is
// not authenticated by a signature: the caller fetched it from the
// provider with the source's credentials. Nothing is written to effects.
func (s *Service) Reconcile(ctx context.Context, sourceID string, f provider.Found) (Reconciled, error) {
	src, pe, err := s.readRecovered(ctx, sourceID, f)
	if err != nil || pe.Entry == nil {
		return Reconciled{EventID: pe.ID, Skipped: err == nil}, err
	}
	d := s.delivery(src, pe, f.Body, envelope.TraceParentOf(ctx), time.Now())
	d.Envelope.Recovered = true
	res := s.committer.submit(ctx, d)
	if res.err != nil {
		return Reconciled{}, res.err
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "recovered event stored",
		slog.String("tenant_id", src.TenantID), slog.String("source_id", src.ID), slog.String("event_id", d.EventID),
		slog.String("event_type", d.EventType), slog.String("object_id", d.ObjectID), slog.String("outcome", string(res.outcome)),
		slog.Int64("inbox_id", res.inboxID))
	return Reconciled{Outcome: res.outcome, InboxID: res.inboxID, EventID: d.EventID}, nil
}

// Peek reads an event reconciliation found as Reconcile would, and stores
// nothing: a dry run's question "is it new?" is then answered by its key.
func (s *Service) Peek(ctx context.Context, sourceID string, f provider.Found) (Reconciled, error) {
	_, pe, err := s.readRecovered(ctx, sourceID, f)
	if err != nil {
		return Reconciled{}, err
	}
	return Reconciled{EventID: pe.ID, Skipped: pe.Entry == nil}, nil
}

// readRecovered reads a recovered event with its source's provider, within
// the same bounds as a webhook's body. Entry is nil for a type the
// catalogue does not handle.
func (s *Service) readRecovered(ctx context.Context, sourceID string, f provider.Found) (*source, providerEvent, error) {
	src, err := s.sources.get(ctx, sourceID)
	if err != nil {
		return nil, providerEvent{}, fmt.Errorf("%w: %w", ErrNotReconcilable, err)
	}
	if src.Scheme.Read == nil {
		return nil, providerEvent{}, fmt.Errorf("%w: kind %s", ErrNotReconcilable, src.Kind)
	}
	if err := s.cfg.Shape.check(f.Body); err != nil {
		return nil, providerEvent{}, fmt.Errorf("recovered event: %w", err)
	}
	pe, err := readEvent(src, f.Header, f.Body, s.catalogueOf(ctx, src.TenantID))
	if err != nil {
		return nil, providerEvent{}, fmt.Errorf("recovered event: %w", err)
	}
	return src, pe, nil
}

// contentSum is what the inbox compares copies of one event key by: the
// body's SHA-256, or, for a kind that says which part of a body identifies
// its event (provider.Scheme.Compared), that part's.
func contentSum(scheme provider.Scheme, doc any, body []byte) [sha256.Size]byte {
	if scheme.Compared != nil && doc != nil {
		if part := scheme.Compared(doc); part != nil {
			return sha256.Sum256(part)
		}
	}
	return sha256.Sum256(body)
}
