package ingest_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
	"github.com/sluicehq/sluice/internal/testenv"
)

// ownDatabase is a fresh database for a test that moves the lifecycle
// manager's clock: dropping the current partitions would break every other
// test sharing the package's database.
func ownDatabase(t *testing.T) string {
	t.Helper()
	services, err := testenv.Find()
	if err != nil {
		t.Fatal(err)
	}
	db, err := services.NewDatabase(context.Background(), "ingest_lifecycle")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	return db.URL
}

// passAt runs one lifecycle pass as if it were now+ahead, with the default
// horizons (payloads 7 days, keys and links 30 days) and daily partitions.
func passAt(t *testing.T, url string, ahead time.Duration) lifecycle.Report {
	t.Helper()
	return passWith(t, url, lifecycle.Config{}, ahead)
}

// passWith is passAt with cfg's horizons.
func passWith(t *testing.T, url string, cfg lifecycle.Config, ahead time.Duration) lifecycle.Report {
	t.Helper()
	pool, err := pg.Connect(context.Background(), url, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	cfg.Now = func() time.Time { return time.Now().Add(ahead) }
	m := lifecycle.New(cfg, pool, slog.New(slog.DiscardHandler), nil)
	r, err := m.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Skipped {
		t.Fatal("pass skipped: another manager holds the lock")
	}
	return r
}

func TestRedeliveryAfterPayloadDroppedIsStillADuplicate(t *testing.T) {
	t.Parallel()
	url := ownDatabase(t)
	b := setupIn(t, ingest.Config{}, url, url)
	original := paid("evt_lc", "in_lc")
	if got := b.send(t, original, nil); got != http.StatusAccepted {
		t.Fatalf("original: status %d", got)
	}

	// Eight days later the payload's partition is past the 7-day horizon;
	// the key (30 days) is not.
	if r := passAt(t, url, 8*24*time.Hour); r.Dropped == 0 || r.KeysDeleted != 0 {
		t.Fatalf("pass 8 days on: %+v, want partitions dropped and no key deleted", r)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_payloads p JOIN inbox i ON i.id = p.inbox_id WHERE i.tenant_id = $1`); n != 0 {
		t.Fatalf("payloads kept = %d, want 0 after their partition was dropped", n)
	}
	// Back to the real clock: the manager fills the current partitions in
	// again (the ones it dropped were also today's).
	if r := passAt(t, url, 0); r.Created == 0 {
		t.Fatalf("pass now: %+v, want today's partitions created again", r)
	}

	if got := b.send(t, original, nil); got != http.StatusOK {
		t.Fatalf("same bytes after the payload is gone: status %d, want 200 (duplicate)", got)
	}
	reserialised := []byte(strings.ReplaceAll(string(original), `,"`, `, "`))
	if got := b.send(t, reserialised, nil); got != http.StatusOK {
		t.Fatalf("same JSON, other bytes, after the payload is gone: status %d, want 200 (duplicate)", got)
	}
	if got := b.send(t, paid("evt_lc", "in_other"), nil); got != http.StatusAccepted {
		t.Fatalf("other content after the payload is gone: status %d, want 202 (conflict kept)", got)
	}
	if n := b.inbox(t); n != 1 {
		t.Fatalf("inbox rows = %d, want 1", n)
	}
	if n := b.outbox(t); n != 1 {
		t.Fatalf("outbox rows = %d, want 1: a duplicate publishes nothing", n)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id WHERE i.tenant_id = $1`); n != 1 {
		t.Fatalf("conflicts = %d, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1 AND outcome = 'duplicate'`); n != 2 {
		t.Fatalf("duplicates in the delivery log = %d, want 2", n)
	}
}

// After the key horizon nothing of the event is left, so a redelivery is a
// new event: accepted and published again (consumers' business keys keep
// its effect single; see README "Storage and retention").
func TestRedeliveryAfterKeyHorizonIsAcceptedAsNew(t *testing.T) {
	t.Parallel()
	url := ownDatabase(t)
	b := setupIn(t, ingest.Config{}, url, url)
	original := paid("evt_lk", "in_lk")
	if got := b.send(t, original, nil); got != http.StatusAccepted {
		t.Fatalf("original: status %d", got)
	}
	var first int64
	if err := b.pool.QueryRow(context.Background(), `SELECT id FROM inbox WHERE tenant_id = $1`, b.tenantID).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if r := passAt(t, url, 31*24*time.Hour); r.KeysDeleted != 1 {
		t.Fatalf("pass 31 days on: %+v, want the one key deleted", r)
	}
	passAt(t, url, 0)
	if got := b.send(t, original, nil); got != http.StatusAccepted {
		t.Fatalf("redelivery after the key horizon: status %d, want 202 (a new event)", got)
	}
	var second int64
	if err := b.pool.QueryRow(context.Background(), `SELECT id FROM inbox WHERE tenant_id = $1`, b.tenantID).Scan(&second); err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatal("the redelivery found the expired key")
	}
	if n := b.outbox(t); n != 2 {
		t.Fatalf("outbox rows = %d, want 2: the redelivery is published as new", n)
	}
}

// Scenario: a Stripe refund of API version basil (it names its payment
// intent and charge, not its invoice) comes after the links horizon took
// its payment's link. It waits, as a refund whose link never came does,
// and stays waiting through passes; reconciliation's candidate walk looks
// its payment intent up (Stripe's invoice payments) and enters the invoice
// payment it finds, whose link publishes the refund to its invoice, its
// waiting row gone in the same transaction.
func TestRefundAfterItsLinkExpiredWaitsUntilReconciliationLinksIt(t *testing.T) {
	t.Parallel()
	url := ownDatabase(t)
	b := setupIn(t, ingest.Config{}, url, url)
	ctx := context.Background()
	s := testenv.RandomSuffix()
	inv, pi, ch, refund := "in_"+s, "pi_"+s, "ch_"+s, "evt_refund_"+s
	links := func() int {
		return b.countFor(t, `SELECT count(*) FROM object_links WHERE source_id = $1 AND object_id = $2`, b.sourceID, inv)
	}
	waiting := func() int {
		return b.countFor(t, `SELECT count(*) FROM inbox i JOIN inbox_waiting w ON w.inbox_id = i.id
			WHERE i.source_id = $1 AND i.event_id = $2 AND i.status = 'waiting'`, b.sourceID, refund)
	}
	paidBody := event("evt_pay_"+s, "invoice_payment.paid", fmt.Sprintf(`{"id":"inpay_%s","object":"invoice_payment","invoice":%q,
		"status":"paid","amount_paid":100,"payment":{"type":"payment_intent","payment_intent":%q,"charge":%q}}`, s, inv, pi, ch))
	if got := b.send(t, paidBody, nil); got != http.StatusAccepted {
		t.Fatalf("invoice_payment.paid: status %d", got)
	}
	if n := links(); n != 2 {
		t.Fatalf("links of %s = %d, want its payment intent and charge", inv, n)
	}

	// Two hours on, past a links horizon of one hour; keys live 30 days.
	if r := passWith(t, url, lifecycle.Config{LinksHorizon: time.Hour}, 2*time.Hour); r.LinksDeleted != 2 || r.KeysDeleted != 0 {
		t.Fatalf("pass 2 hours on: %+v, want the 2 links deleted and no key", r)
	}
	refundBody := event(refund, "charge.refunded", fmt.Sprintf(`{"id":%q,"object":"charge","payment_intent":%q,"amount_refunded":100}`, ch, pi))
	if got := b.send(t, refundBody, nil); got != http.StatusAccepted {
		t.Fatalf("charge.refunded: status %d", got)
	}
	if n := waiting(); n != 1 {
		t.Fatalf("refund after its link expired: %d waiting rows, want 1", n)
	}
	passWith(t, url, lifecycle.Config{LinksHorizon: time.Hour}, 2*time.Hour)
	if n := waiting(); n != 1 {
		t.Fatalf("refund after a pass: %d waiting rows, want it still waiting", n)
	}

	api := stripetest.New(t)
	api.RecordInvoicePayment(stripetest.InvoicePayment{ID: "inpay_" + s, Invoice: inv, PaymentIntent: pi, Charge: ch,
		AmountPaid: 100, PaidAt: time.Now().Add(-time.Hour)})
	if err := b.store.SetAPICredentials(ctx, b.sourceID, fmt.Appendf(nil, `{"secret_key":"rk_test_%s","api_base":%q}`, s, api.URL)); err != nil {
		t.Fatal(err)
	}
	runner := reconcile.New(reconcile.Config{}, slog.New(slog.DiscardHandler), b.store, kinds.Builtin(), b.svc, reconcile.NewMetrics(prometheus.NewRegistry()))
	if _, err := runner.Source(ctx, b.sourceID, provider.Window{Since: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if n := b.countFor(t, `SELECT count(*) FROM inbox i JOIN outbox o ON o.inbox_id = i.id
		WHERE i.source_id = $1 AND i.event_id = $2 AND i.status = 'published' AND i.object_id = $3 AND o.headers->>'ce_subject' = $3`,
		b.sourceID, refund, inv); n != 1 {
		t.Fatalf("refund after reconciliation: not published to %s", inv)
	}
	if n := b.countFor(t, `SELECT count(*) FROM inbox_waiting WHERE source_id = $1`, b.sourceID); n != 0 {
		t.Fatalf("%d waiting rows left after the refund was published", n)
	}
	if n := links(); n != 2 {
		t.Fatalf("links of %s after reconciliation = %d, want both entered again", inv, n)
	}
}
