package ingest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// A subject's payloads are purged on request; the keys stay, so the same
// delivery sent again is still a 200 duplicate and stores nothing.
func TestErasedSubjectRedeliveryIsStillADuplicate(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	mentions := paid("evt_erase_1", "in_erase_1") // customer cus_1
	other := event("evt_erase_2", "invoice.paid", `{"id":"in_erase_2","object":"invoice","customer":"cus_2","amount_paid":100,"status":"paid"}`)
	for _, body := range [][]byte{mentions, other} {
		if got := b.send(t, body, nil); got != http.StatusAccepted {
			t.Fatalf("send: status %d", got)
		}
	}
	e, err := lifecycle.EraseSubject(context.Background(), b.pool, b.tenantID, `"cus_1"`)
	if err != nil {
		t.Fatal(err)
	}
	if e.Events != 1 || e.OutboxRows != 1 {
		t.Fatalf("erased %+v, want the one event mentioning cus_1 and its outbox row", e)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_payloads p JOIN inbox i ON i.id = p.inbox_id WHERE i.tenant_id = $1`); n != 1 {
		t.Fatalf("payloads kept = %d, want only the one not mentioning the subject", n)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND erased_at IS NOT NULL`); n != 1 {
		t.Fatalf("keys marked erased = %d, want 1 (kept)", n)
	}
	if got := b.send(t, mentions, nil); got != http.StatusOK {
		t.Fatalf("redelivery of an erased event: status %d, want 200 (duplicate)", got)
	}
	if n := b.inbox(t); n != 2 {
		t.Fatalf("inbox rows = %d, want 2", n)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_payloads p JOIN inbox i ON i.id = p.inbox_id WHERE i.tenant_id = $1`); n != 1 {
		t.Fatal("the redelivery stored the erased payload again")
	}
}

// Offboarding removes every row of the tenant, and nothing of another's.
func TestTenantErasureRemovesEveryRowOfTheTenantOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	other := setup(t, ingest.Config{})
	for _, x := range []*bundle{b, other} {
		for _, body := range [][]byte{paid("evt_off_1", "in_off_1"), paid("evt_off_1", "in_off_1"), paid("evt_off_1", "in_changed")} {
			if got := x.send(t, body, nil); got >= 300 {
				t.Fatalf("send: status %d", got)
			}
		}
	}
	// Its own event types go too (a version row hangs off each).
	if _, err := b.pool.Exec(context.Background(), `WITH t AS (INSERT INTO event_types (tenant_id, source_kind, event_type, resource_type)
		VALUES ($1, 'hmac', 'order.placed', 'order') RETURNING id)
		INSERT INTO event_type_versions (event_type_id, version, schema, compatible) SELECT id, 1, '{}', false FROM t`, b.tenantID); err != nil {
		t.Fatal(err)
	}
	before := other.storedFor(t, other.tenantID)
	e, err := lifecycle.EraseTenant(context.Background(), b.pool, b.tenantID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Events != 1 || e.Payloads != 1 || e.OutboxRows != 1 {
		t.Fatalf("erased %+v, want 1 event, its payload and outbox row", e)
	}
	if n := b.storedFor(t, b.tenantID); n != 0 {
		t.Fatalf("rows of the erased tenant left: %d", n)
	}
	for _, q := range []string{`SELECT count(*) FROM tenants WHERE id = $1`, `SELECT count(*) FROM sources WHERE tenant_id = $1`,
		`SELECT count(*) FROM event_types WHERE tenant_id = $1`,
		`SELECT count(*) FROM inbox_conflicts c WHERE $1::uuid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.id = c.inbox_id)`} {
		if n := b.count(t, q); n != 0 {
			t.Errorf("%s: %d rows left", q, n)
		}
	}
	if after := other.storedFor(t, other.tenantID); after != before {
		t.Fatalf("another tenant's rows went from %d to %d", before, after)
	}
	if _, err := lifecycle.EraseTenant(context.Background(), b.pool, b.tenantID, nil); !errors.Is(err, refusal.ErrNotFound) {
		t.Fatalf("erasing again: %v, want ErrNoTenant", err)
	}
}
