package ingest_test

import (
	"net/http"
	"testing"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/provider/kinds/providertest"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// A kind is its folder (internal/provider/kinds/providertest) and one
// registry line: no other Go edit and no migration. Its signed delivery
// reaches the inbox and the outbox like any shipped kind's; a forged one is
// refused.
func TestAMadeUpKindNeedsOnlyItsFolderAndARegistryLine(t *testing.T) {
	t.Parallel()
	registry, err := kinds.Builtin().With(providertest.Acme{})
	if err != nil {
		t.Fatal(err)
	}
	b := setupWith(t, ingest.Config{Providers: registry}, dbURL, providertest.Schemas())
	src := b.newSource(t, tenancy.NewSource{TenantID: b.tenantID, Kind: "acme", Secret: "acme-secret"})
	body := []byte(`{"event":"thing.created","at":"2026-07-08T09:10:11Z","thing":{"id":"th_1"}}`)
	if status, answer := b.post(t, "/v1/ingest/"+src, body, providertest.Sign("acme-secret", "ad_1", body)); status != http.StatusAccepted {
		t.Fatalf("status %d: %s", status, answer)
	}
	if got := b.stored(t, src, "ad_1"); got.status != "published" || got.objectID != "th_1" {
		t.Fatalf("stored %+v", got)
	}
	b.assertPublished(t, src, "ad_1", b.tenantID+"/thing/th_1", "acme.thing.created", "2026-07-08T09:10:11Z")
	if status, _ := b.post(t, "/v1/ingest/"+src, body, providertest.Sign("not-the-secret", "ad_2", body)); status != http.StatusUnauthorized {
		t.Fatalf("forged delivery: status %d, want 401", status)
	}
	if n := b.countFor(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, src); n != 1 {
		t.Fatalf("%d inbox rows, want 1", n)
	}
}

// A build that does not know a kind answers its sources as unknown, and
// administration refuses to create one.
func TestAKindOutsideTheRegistryTakesNoDelivery(t *testing.T) {
	t.Parallel()
	registry, err := kinds.Builtin().With(providertest.Acme{})
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, ingest.Config{}) // the shipped kinds only
	acme := tenancy.Store{Pool: b.store.Pool, Ring: b.store.Ring, Providers: registry}
	src := b.newSourceIn(t, acme, tenancy.NewSource{TenantID: b.tenantID, Kind: "acme", Secret: "acme-secret"})
	body := []byte(`{"event":"thing.created","at":"2026-07-08T09:10:11Z","thing":{"id":"th_1"}}`)
	if status, _ := b.post(t, "/v1/ingest/"+src, body, providertest.Sign("acme-secret", "ad_1", body)); status != http.StatusNotFound {
		t.Fatalf("status %d, want 404", status)
	}
	if _, err := b.store.CreateSource(t.Context(), tenancy.NewSource{TenantID: b.tenantID, Kind: "acme", Account: "a", Secret: "s"}); err == nil {
		t.Fatal("created a source of a kind the registry does not hold")
	}
}
