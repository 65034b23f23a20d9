package kinds_test

import (
	"slices"
	"testing"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/schemas"
)

// Every kind the catalogue has event types for is a shipped kind (or the
// first-party api kind): a schema folder no provider reads is dead.
func TestEveryCatalogueKindIsShipped(t *testing.T) {
	t.Parallel()
	registry := kinds.Builtin()
	catalogue, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range catalogue.Kinds() {
		if _, ok := registry.Get(provider.Kind(k)); !ok && provider.Kind(k) != provider.KindAPI {
			t.Errorf("schemas/%s has no provider", k)
		}
	}
}

// Settings are for the kinds that read them: the others refuse them, so a
// mistyped --kind with --hmac-* flags is not silently a stripe source.
func TestOnlyKindsWithSettingsTakeThem(t *testing.T) {
	t.Parallel()
	registry := kinds.Builtin()
	settings := []byte(`{"header":"X-Sig","eventId":"/id","eventType":"/type"}`)
	for _, k := range registry.Kinds() {
		p, _ := registry.Get(k)
		bare, errNone := p.Open(nil, 0)
		set, errSome := p.Open(settings, 0)
		wantsSettings := k == "hmac"
		if (errNone == nil) == wantsSettings || (errSome == nil) != wantsSettings {
			t.Errorf("%s: open without settings: %v; with: %v", k, errNone, errSome)
		}
		if scheme := map[bool]provider.Scheme{false: bare, true: set}[wantsSettings]; scheme.Verifier == nil || scheme.Read == nil {
			t.Errorf("%s: opened without a verifier or a reader", k)
		}
	}
	if got := registry.Kinds(); !slices.Equal(got, []provider.Kind{"stripe", "github", "standard_webhooks", "hmac"}) {
		t.Errorf("shipped kinds %v", got)
	}
}
