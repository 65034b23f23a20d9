package cli

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stripe/stripe-go/v82/webhook"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// ownDatabase gives one test a migrated database of its own, for a
// pipeline the test starts itself, and a pool on it; both go when the test
// ends.
func ownDatabase(t *testing.T, prefix string) (string, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	db, err := testenv.Require(t).NewDatabase(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	pool, err := pg.Connect(ctx, db.URL, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return db.URL, pool
}

// tenantFixture is one test's own tenant with a Stripe source and a
// workspace mapped from a customer.
type tenantFixture struct {
	tenantID, sourceID, account, secret string
	customer, workspaceID               string
}

func newTenant(t *testing.T) tenantFixture {
	t.Helper()
	return newTenantIn(t, suite.store)
}

// newTenantIn makes the fixture in another pipeline's database.
func newTenantIn(t *testing.T, store tenancy.Store) tenantFixture {
	t.Helper()
	ctx := context.Background()
	s := testenv.RandomSuffix()
	f := tenantFixture{account: "acct_" + s, secret: "whsec_" + s + s, customer: "cus_" + s}
	var err error
	if f.tenantID, err = store.CreateTenant(ctx, t.Name()); err != nil {
		t.Fatal(err)
	}
	if f.sourceID, err = store.CreateSource(ctx, tenancy.NewSource{TenantID: f.tenantID, Kind: "stripe", Account: f.account, Secret: f.secret}); err != nil {
		t.Fatal(err)
	}
	if f.workspaceID, err = store.CreateWorkspace(ctx, f.tenantID, f.customer, "ws"); err != nil {
		t.Fatal(err)
	}
	return f
}

func invoicePaid(eventID, invoiceID, customer string, amountPaid int64) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"event","type":"invoice.paid","created":%d,"data":{"object":`+
		`{"id":%q,"object":"invoice","customer":%q,"amount_paid":%d,"currency":"usd","status":"paid"}}}`,
		eventID, time.Now().Unix(), invoiceID, customer, amountPaid)
}

// stripeSignature signs with Stripe's own library, so ingest is checked
// against the provider's implementation rather than our reading of it.
func stripeSignature(secret string, body []byte, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at}).Header
}

// post sends a webhook for the fixture's source and returns the status.
func (f tenantFixture) post(t *testing.T, body []byte, signature string) int {
	t.Helper()
	return postHeaders(t, f.sourceID, body, map[string]string{"Stripe-Signature": signature})
}

func (f tenantFixture) sendSigned(t *testing.T, body []byte) int {
	t.Helper()
	return f.post(t, body, stripeSignature(f.secret, body, time.Now()))
}

func count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := suite.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (f tenantFixture) inboxRows(t *testing.T) int {
	return count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1`, f.tenantID)
}

// outboxRows counts the tenant's published webhook events (not the e-mail
// intents consumers write as their second hop).
func (f tenantFixture) outboxRows(t *testing.T) int {
	return count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1 AND topic = $2`,
		f.tenantID, suite.topics.Resource("invoices"))
}

func (f tenantFixture) grants(t *testing.T) int {
	return count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.tenantID)
}

func (f tenantFixture) balance(t *testing.T) int64 {
	t.Helper()
	b, err := suite.store.Balance(context.Background(), f.workspaceID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func headerMap(r *kgo.Record) map[string]string {
	h := map[string]string{}
	for _, kv := range r.Headers {
		h[kv.Key] = string(kv.Value)
	}
	return h
}

// recordsFor reads topic from the start until it has found want records
// whose ce_id is one of ids, and returns every such record it saw.
func recordsFor(t *testing.T, topic string, want int, ids ...string) []*kgo.Record {
	t.Helper()
	match := map[string]bool{}
	for _, id := range ids {
		match[id] = true
	}
	cl := kafkaClient(t, topic)
	var found []*kgo.Record
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for len(found) < want {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("found %d of %d records for %v on %s before the deadline", len(found), want, ids, topic)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if match[headerMap(r)[envelope.HeaderID]] {
				found = append(found, r)
			}
		})
	}
	return found
}

// waitConsumed waits until the credits group committed past every record.
func waitConsumed(t *testing.T, recs ...*kgo.Record) {
	t.Helper()
	waitGroupPast(t, suite.group, recs...)
}

// startIngest runs an ingest process of cfg, its listeners on free ports,
// and returns it with what stops it (also run when the test ends); a
// refusal to start is returned for the test to judge.
func startIngest(t *testing.T, cfg pipeline.Config) (*pipeline.Process, func(), error) {
	t.Helper()
	cfg.HTTPAddr, cfg.AdminAddr, cfg.Ingest = "127.0.0.1:0", "127.0.0.1:0", true
	ctx, cancel := context.WithCancel(context.Background())
	p, err := pipeline.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		return nil, nil, err
	}
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); _ = p.Wait() }) }
	t.Cleanup(stop)
	return p, stop, nil
}
