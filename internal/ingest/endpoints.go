package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// subscriptions answers "does one of this tenant's enabled endpoints take
// this type?" for events no handler and no schema knows: such an event is
// published for delivery when one does (on the destinations topic), kept
// as unhandled otherwise. The enabled endpoints' filters are read in one
// query for the deployment, as the fan-out reads them, and kept for the
// source cache time, so an endpoint created, changed or disabled is seen
// within it; concurrent misses share one read.
type subscriptions struct {
	index *ttlCache[*endpoints.Index]
}

func newSubscriptions(pool *pgxpool.Pool, ttl time.Duration) *subscriptions {
	store := endpoints.Store{Pool: pool}
	return &subscriptions{index: newTTLCache(ttl, func(ctx context.Context, _ string) (*endpoints.Index, error) {
		subs, err := store.Subscriptions(ctx)
		if err != nil {
			return nil, err
		}
		// Ingest asks by type alone (Index.Any): the fan-out judges the
		// expressions, which this index would compile for nothing.
		for i := range subs {
			subs[i].Expression = ""
		}
		return endpoints.NewIndex(subs, nil), nil
	})}
}

// any says whether one of tenant's enabled endpoints takes the full type
// ({kind}.{provider type}, as ce_type); an errCatalogue when the endpoints
// cannot be read (nothing can be decided about the event: 503).
func (s *subscriptions) any(ctx context.Context, tenant, fullType string) (bool, error) {
	ix, err := s.index.get(ctx, "")
	if err != nil {
		return false, fmt.Errorf("%w: endpoints: %w", errCatalogue, err)
	}
	return ix.Any(tenant, fullType), nil
}
