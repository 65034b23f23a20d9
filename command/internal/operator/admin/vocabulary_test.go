package admin_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds/hmac"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// The document lists the deployment's vocabularies where a body names
// them: a source's kind from the provider registry, an event type's kind
// (the registry's, or api) and resource type from the catalogue's
// configuration (SLUICE_TENANT_RESOURCE_TYPES), not a list written in
// the API.
func TestTheDocumentListsTheKindsAndResourceTypes(t *testing.T) {
	t.Parallel()
	reg, err := provider.NewRegistry(stripe.Provider{}, hmac.Provider{})
	if err != nil {
		t.Fatal(err)
	}
	types, err := catalog.New(nil, catalog.Config{Topics: topics, Providers: reg, ResourceTypes: []string{"order", "widget"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := listen.NewAdmin("127.0.0.1:0", slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil)
	api := admin.New(srv.Engine, admin.Config{Store: tenancy.Store{Providers: reg}, Groups: []func(*admin.API){admin.CatalogRoutes(types)}},
		slog.New(slog.DiscardHandler))
	raw, err := json.Marshal(api.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum    []string `json:"enum"`
					Pattern string   `json:"pattern"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		schema, field string
		want          []string
	}{
		{"NewSourceBody", "kind", []string{"stripe", "hmac"}},
		{"NewEventTypeBody", "source_kind", []string{"api", "stripe", "hmac"}},
		{"NewEventTypeBody", "resource_type", []string{"order", "widget"}},
	} {
		p := doc.Components.Schemas[c.schema].Properties[c.field]
		if !slices.Equal(p.Enum, c.want) || p.Pattern != "" {
			t.Errorf("%s.%s: enum %v, pattern %q; want the enum %v alone", c.schema, c.field, p.Enum, p.Pattern, c.want)
		}
	}
}

// A value outside a vocabulary is refused at the edge like any value the
// document refuses: 422 naming the field, before a store sees it.
func TestAValueOutsideTheVocabularyIsRefusedAtTheEdge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant := b.newTenant(t)
	b.wantRefused(t, b.token(t, admintoken.RoleOperate, ""), []refusal{
		{http.MethodPost, "/admin/v1/sources", map[string]any{"tenant_id": tenant, "kind": "paypal", "account": "a", "secret": "s"},
			`"location":"body.kind"`},
		{http.MethodPost, "/admin/v1/tenants/" + tenant + "/event-types", map[string]any{"source_kind": "paypal", "event_type": "a.b",
			"resource_type": "order", "schema": map[string]any{"type": "object"}}, `"location":"body.source_kind"`},
		{http.MethodPost, "/admin/v1/tenants/" + tenant + "/event-types", map[string]any{"source_kind": "api", "event_type": "a.b",
			"resource_type": "spaceship", "schema": map[string]any{"type": "object"}}, `"location":"body.resource_type"`},
	})
}
