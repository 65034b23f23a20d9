package kinds_test

import (
	"slices"
	"strings"
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

// Every kind with an API reads its credentials document the one way
// (provider.ReadCredentials): strict JSON, an http(s) base, then its own
// checks, and no refusal quotes the document (it holds secrets).
func TestEveryKindReadsItsCredentialsTheOneWay(t *testing.T) {
	t.Parallel()
	registry := kinds.Builtin()
	for kind, c := range map[provider.Kind]struct{ good, badOwn string }{
		"stripe": {`{"secret_key":"rk_test_secret"}`, `{"secret_key":"pk_test_secret"}`},
		"standard_webhooks": {`{"object_url":"https://idv.example/v/{id}","auth_header":"Authorization","auth_value":"Bearer sk_secret","event_type":"verification.{state}","state_pointer":"/status","version_pointer":"/at"}`,
			`{"object_url":"https://idv.example/v","auth_header":"Authorization","auth_value":"Bearer sk_secret","event_type":"feedback.created","version_pointer":"/at"}`},
		"github": {"", `{"app_id":0,"private_key":"secret"}`},
	} {
		p, ok := registry.Get(kind)
		if !ok {
			t.Fatalf("no kind %s", kind)
		}
		r, ok := p.(provider.Reconciler)
		if !ok {
			t.Fatalf("%s has no API", kind)
		}
		for _, bad := range []struct{ doc, says string }{
			{`secret`, "must be JSON"},
			{`{"secret":"x","unknown_field":1}`, "must be JSON"},
			{c.badOwn, "API credentials: "},
		} {
			err := r.CheckAPICredentials([]byte(bad.doc))
			if err == nil || !strings.Contains(err.Error(), string(kind)+" API credentials") || !strings.Contains(err.Error(), bad.says) || len(bad.doc) > 10 && strings.Contains(err.Error(), bad.doc) {
				t.Errorf("%s %s: %v, want a refusal saying %q that quotes nothing", kind, bad.doc, err, bad.says)
			}
		}
		if c.good != "" {
			if err := r.CheckAPICredentials([]byte(c.good)); err != nil {
				t.Errorf("%s %s: %v", kind, c.good, err)
			}
			withBase := strings.Replace(c.good, "{", `{"api_base":"ftp://example",`, 1)
			if kind == "stripe" {
				if err := r.CheckAPICredentials([]byte(withBase)); err == nil || !strings.Contains(err.Error(), "api_base must be an http(s) URL") {
					t.Errorf("%s %s: %v, want the base refused", kind, withBase, err)
				}
			}
		}
	}
}
