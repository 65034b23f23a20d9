package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/schemas"
)

// errCatalogue: a tenant's event types, or its endpoints' filters, could
// not be read. Nothing can be decided about the event (published,
// quarantined or unhandled), so the request is answered 503 and the sender
// retries.
var errCatalogue = errors.New("tenant event types unavailable")

// unusableEntry is a tenant's type that exists but cannot publish in this
// instance (its resource type has no topic here, or its schema no longer
// compiles): its events are quarantined with this reason, never kept as
// unhandled as if the type did not exist.
type unusableEntry struct{ reason string }

func (u *unusableEntry) Error() string { return u.reason }

// tenantTypes reads tenants' own event types (internal/store/catalog) the way
// sources are read: each tenant's list kept for the source cache time, so a
// new type or version is used within it; compiled schemas are cached by the
// catalogue, by version, bounded.
type tenantTypes struct {
	store *catalog.Store
	lists *ttlCache[map[string]catalog.Meta]
}

func newTenantTypes(store *catalog.Store, ttl time.Duration) *tenantTypes {
	t := &tenantTypes{store: store}
	t.lists = newTTLCache(ttl, store.Types)
	return t
}

// catalogue is the event types a tenant's deliveries are judged by: the
// built-in ones first (a tenant's own never shadows one), then the tenant's;
// and, for a type neither knows, the tenant's endpoints' filters.
type catalogue struct {
	ctx     context.Context
	builtin *schemas.Catalogue
	tenant  string
	types   *tenantTypes
	subs    *subscriptions
}

func (s *Service) catalogueOf(ctx context.Context, tenant string) catalogue {
	return catalogue{ctx: ctx, builtin: s.catalogue, tenant: tenant, types: s.tenantTypes, subs: s.subscriptions}
}

// Subscribed says whether one of the tenant's enabled endpoints takes the
// full type ({kind}.{provider type}); errCatalogue when their filters
// cannot be read.
func (c catalogue) Subscribed(fullType string) (bool, error) {
	if c.subs == nil {
		return false, nil
	}
	return c.subs.any(c.ctx, c.tenant, fullType)
}

// Lookup returns the entry of a type, nil when none handles it; an
// *unusableEntry when the tenant's entry cannot publish here; errCatalogue
// when the tenant's types cannot be read.
func (c catalogue) Lookup(kind, typ string) (*schemas.Entry, error) {
	if e, ok := c.builtin.Lookup(kind, typ); ok {
		return e, nil
	}
	if c.types == nil {
		return nil, nil
	}
	list, err := c.types.lists.get(c.ctx, c.tenant)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errCatalogue, err)
	}
	m, ok := list[catalog.TypeKey(kind, typ)]
	if !ok {
		return nil, nil
	}
	if !c.types.store.Config().HasResourceType(m.ResourceType) {
		return nil, &unusableEntry{fmt.Sprintf("%s v%d: resource type %q has no topic in this deployment (SLUICE_TENANT_RESOURCE_TYPES)", typ, m.Version, m.ResourceType)}
	}
	e, err := c.types.store.Compiled(c.ctx, c.tenant, m)
	if r, refused := refusal.Of(err); refused {
		return nil, &unusableEntry{r.Error()}
	} else if err != nil {
		return nil, fmt.Errorf("%w: %w", errCatalogue, err)
	}
	return e, nil
}
