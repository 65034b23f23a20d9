package console_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// world is one tenant with what the pages show: a Stripe source, a paid
// invoice's event (with a conflicting delivery of it), and that event as a
// dead letter of the credits group (its customer had no workspace yet).
type world struct {
	tenant, source, account string
	eventID, invoice        string
	customer                string
	inboxID, deadLetter     string
	endpoint, delivery      string
}

func (b *bundle) newWorld(t testing.TB) world {
	t.Helper()
	ctx := t.Context()
	sfx := testenv.RandomSuffix()
	w := world{account: "acct_" + sfx, eventID: "evt_" + sfx, invoice: "in_" + sfx, customer: "cus_" + sfx}
	var err error
	if w.tenant, err = b.store.CreateTenant(ctx, "t-"+sfx); err != nil {
		t.Fatal(err)
	}
	if w.source, err = b.store.CreateSource(ctx, tenancy.NewSource{TenantID: w.tenant, Kind: "stripe", Account: w.account, Secret: "whsec_" + sfx}); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"id":%q,"object":"event","type":"invoice.paid","created":%d,"data":{"object":{"id":%q,"object":"invoice","customer":%q,"amount_paid":1000,"status":"paid"}}}`,
		w.eventID, time.Now().Unix(), w.invoice, w.customer)
	var inboxID int64
	err = b.pool.QueryRow(ctx, `
		WITH i AS (
			INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, object_type, object_id, status, body_sha256)
			VALUES ($1, $2, $3, $4, 'stripe.invoice.paid', 'invoice', $5, 'published', '\x00')
			RETURNING id, received_at
		), p AS (
			INSERT INTO inbox_payloads (inbox_id, received_at, body) SELECT id, received_at, $6 FROM i
		), c AS (
			INSERT INTO inbox_conflicts (inbox_id, received_at, body_sha256, body)
			SELECT id, received_at + interval '1 second', '\x01', $7 FROM i
		)
		SELECT id FROM i`, w.tenant, w.source, w.account, w.eventID, w.invoice, []byte(body),
		[]byte(`{"id":"`+w.eventID+`","object":"event","type":"invoice.paid","data":{"object":{"amount_paid":9999}}}`)).Scan(&inboxID)
	if err != nil {
		t.Fatal(err)
	}
	w.inboxID = strconv.FormatInt(inboxID, 10)
	ev := envelope.Event{ID: w.eventID, Source: envelope.SourceURI(w.tenant, w.source), Type: "stripe.invoice.paid", Subject: w.invoice,
		TenantID: w.tenant, SourceAccount: w.account, PartitionKey: w.invoice, InboxID: w.inboxID}
	var id int64
	err = b.pool.QueryRow(ctx, `
		INSERT INTO dead_letters (consumer_group, topic, partition, "offset", key, headers, payload, reason, attempts,
		                          first_failed_at, last_failed_at)
		VALUES ('sluice.credits', 'sluice.invoices', 0, nextval('inbox_id_seq'), $1, $2, $3, $4, 3, now(), now())
		RETURNING id`, []byte(w.invoice), ev.Headers(), []byte(body), "no workspace maps customer "+w.customer).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	w.deadLetter = strconv.FormatInt(id, 10)
	e, _, err := b.ends.CreateEndpoint(ctx, endpoints.New{TenantID: w.tenant, URL: "https://receiver.example/" + sfx, Filters: []string{"stripe.invoice.*"}})
	if err != nil {
		t.Fatal(err)
	}
	w.endpoint = e.ID
	// The event's delivery to the endpoint, dead after a request the
	// endpoint answered 500.
	var delivery int64
	if err := b.pool.QueryRow(ctx, `
INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, last_status, last_error, latency_ms,
                        inbox_id, event_id, event_type, source, topic, partition, "offset")
VALUES ($1, $2, 'msg_' || $3::bigint, 'invoice/' || $4, 'dead', 1, 500, 'status 500', 12, $3::bigint, $5, 'stripe.invoice.paid', 's', 'sluice.invoices', 0, 1)
RETURNING id`, w.endpoint, w.tenant, inboxID, w.invoice, w.eventID).Scan(&delivery); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, attempt, endpoint_id, status, latency_ms, error_class, error, answer)
VALUES ($1, 1, $2, 500, 12, 'status', 'status 500', 'receiver fell over')`, delivery, w.endpoint); err != nil {
		t.Fatal(err)
	}
	w.delivery = strconv.FormatInt(delivery, 10)
	// An event type of the tenant's API source in two versions.
	types, err := catalog.New(b.pool, catalog.Config{Providers: kinds.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	for _, schema := range []string{`{"type":"object"}`, `{"type":"object","required":["order_id"]}`} {
		if _, err := types.Create(ctx, catalog.Spec{TenantID: w.tenant, Kind: "api", Type: worldType, Schema: []byte(schema), ResourceType: "order"}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// worldType is the event type every world declares, in two versions.
const worldType = "order.shipped"

// granted is the credits granted for w's invoice.
func (b *bundle) granted(t *testing.T, w world) int64 {
	t.Helper()
	var n int64
	if err := b.pool.QueryRow(t.Context(), `SELECT coalesce(sum(credits), 0) FROM credit_grants WHERE tenant_id = $1 AND object_id = $2`,
		w.tenant, w.invoice).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// audited counts w's audit rows of action.
func (b *bundle) audited(t *testing.T, tokenID, action string) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(t.Context(), `SELECT count(*) FROM admin_audit WHERE token_id = $1 AND action = $2 AND outcome = 'ok'`,
		tokenID, action).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
