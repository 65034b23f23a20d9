package ingest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider"
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
	// Skipped: the event's type has no catalogue entry and none of the
	// tenant's endpoints takes it, so nothing was stored (a webhook of it
	// would only be kept as unhandled; recovering every type a provider
	// lists would fill the inbox with those).
	Skipped bool
}

// Reconcile enters events reconciliation found for a source (a page of a
// listing) through the same door as a webhook: read by the source's
// provider, checked against the catalogue, and stored as inbox and outbox
// rows through group commit, submitted together as a batch is, under the
// event key a webhook of the same event has. They are not authenticated by
// a signature: the caller fetched them from the provider with the source's
// credentials. Nothing is written to effects. It returns what became of
// each, in order, or the first error (what committed before it stays).
func (s *Service) Reconcile(ctx context.Context, sourceID string, found []provider.Found) ([]Reconciled, error) {
	out := make([]Reconciled, len(found))
	var (
		src   *source
		ds    []*delivery
		index []int
	)
	trace, now := envelope.TraceParentOf(ctx), time.Now()
	for i, f := range found {
		got, pe, err := s.readRecovered(ctx, sourceID, f)
		if err != nil {
			return nil, err
		}
		src = got
		out[i] = Reconciled{EventID: pe.ID, Skipped: skipped(pe)}
		if out[i].Skipped {
			continue
		}
		d := s.delivery(src, pe, f.Body, trace, now)
		d.Envelope.Recovered = true
		ds, index = append(ds, d), append(index, i)
	}
	if len(ds) == 0 {
		return out, nil
	}
	for j, res := range s.committer.submitAll(ctx, src.TenantID, ds) {
		if res.err != nil {
			return nil, res.err
		}
		d, i := ds[j], index[j]
		out[i] = Reconciled{Outcome: res.outcome, InboxID: res.inboxID, EventID: d.EventID}
		s.log.LogAttrs(ctx, slog.LevelInfo, "recovered event stored",
			slog.String("tenant_id", src.TenantID), slog.String("source_id", src.ID), slog.String("event_id", d.EventID),
			slog.String("event_type", d.EventType), slog.String("object_id", d.ObjectID), slog.String("outcome", string(res.outcome)),
			slog.Int64("inbox_id", res.inboxID))
	}
	return out, nil
}

// Peek reads events reconciliation found as Reconcile would, and stores
// nothing: a dry run's question "is it new?" is then answered by their
// keys.
func (s *Service) Peek(ctx context.Context, sourceID string, found []provider.Found) ([]Reconciled, error) {
	out := make([]Reconciled, len(found))
	for i, f := range found {
		_, pe, err := s.readRecovered(ctx, sourceID, f)
		if err != nil {
			return nil, err
		}
		out[i] = Reconciled{EventID: pe.ID, Skipped: skipped(pe)}
	}
	return out, nil
}

// skipped says whether reconciliation leaves a recovered event out: a type
// no handler and no schema knows, unless one of the tenant's endpoints
// takes it (then it is published for them, as its webhook would be).
func skipped(pe providerEvent) bool { return pe.Entry == nil && !pe.Subscribed }

// HandledTypes lists the provider event types the catalogue of a source's
// tenant handles for the source's kind (built-in and the tenant's own,
// sorted): the only ones a reconciliation asks the provider for. Types only
// the tenant's endpoints take are not among them: an endpoint's filter may
// be a pattern (stripe.invoice.*, *), which names no list of types to ask
// for without a list of every type the provider has, and asking for every
// type would recover far more than anyone handles. Reconcile still
// publishes such an event for the endpoints when a listing brings one
// (skipped), as its webhook would be.
func (s *Service) HandledTypes(ctx context.Context, sourceID string) ([]string, error) {
	src, err := s.sources.get(ctx, sourceID)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotReconcilable, err)
	}
	types := s.catalogue.Types(string(src.Kind))
	if s.tenantTypes != nil {
		list, err := s.tenantTypes.lists.get(ctx, src.TenantID)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errCatalogue, err)
		}
		for _, m := range list {
			if m.Kind == string(src.Kind) && !slices.Contains(types, m.Type) {
				types = append(types, m.Type)
			}
		}
	}
	slices.Sort(types)
	return types, nil
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
