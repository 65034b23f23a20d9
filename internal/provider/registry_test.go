package provider_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
)

type fake provider.Kind

func (f fake) Kind() provider.Kind { return provider.Kind(f) }
func (fake) Open([]byte, time.Duration) (provider.Scheme, error) {
	return provider.Scheme{}, nil
}
func (fake) CheckSecret(string) error { return nil }

func TestRegistryRefusesAmbiguousKindsAndNeverChangesInPlace(t *testing.T) {
	t.Parallel()
	r, err := provider.NewRegistry(fake("a"), fake("b"))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]provider.Provider{"twice": fake("a"), "empty": fake(""), "api": fake(provider.KindAPI)} {
		if _, err := r.With(p); err == nil {
			t.Errorf("%s: registered", name)
		}
	}
	more, err := r.With(fake("c"))
	if err != nil {
		t.Fatal(err)
	}
	if got := more.Kinds(); !slices.Equal(got, []provider.Kind{"a", "b", "c"}) {
		t.Fatalf("kinds %v", got)
	}
	if _, ok := r.Get("c"); ok {
		t.Fatal("With changed the registry it was called on")
	}
	if _, err := r.Lookup("c"); err == nil || err.Error() != `unknown source kind "c" (want one of [a b])` {
		t.Fatalf("lookup of an unknown kind: %v", err)
	}
}
