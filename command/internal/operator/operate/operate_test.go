package operate_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/inbox"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
	"github.com/sluicehq/sluice/internal/testenv"
)

func TestMain(m *testing.M) {
	if _, err := testenv.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "operate tests:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// bundle is one test's database and operator, with two tenants and a
// source each.
type bundle struct {
	pool             *pgxpool.Pool
	op               *operate.Operator
	topics           envelope.Topics
	tenantA, tenantB string
	sourceA, sourceB string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	ctx := context.Background()
	services := testenv.Require(t)
	db, err := services.NewDatabase(ctx, "operate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	pool, err := pg.Connect(ctx, db.URL, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// The tests seed rows up to an hour old; the migration's partitions
	// start at today's midnight (UTC), so shortly after midnight those rows
	// would have none. One pass with the clock a day back covers yesterday.
	yesterday := func() time.Time { return time.Now().Add(-24 * time.Hour) }
	if _, err := lifecycle.New(lifecycle.Config{Now: yesterday, NoCleanup: true}, pool, slog.New(slog.DiscardHandler), nil).Pass(ctx); err != nil {
		t.Fatal(err)
	}
	b := &bundle{pool: pool, topics: envelope.Topics{Prefix: "op" + testenv.RandomSuffix() + ".sluice"}}
	b.op = operate.New(pool, nil, operate.Config{Topics: b.topics, Groups: builtintest.Options(t, b.topics), Trails: builtintest.Trails()})
	b.tenantA, b.sourceA = b.tenant(t, "a")
	b.tenantB, b.sourceB = b.tenant(t, "b")
	return b
}

func (b *bundle) tenant(t *testing.T, name string) (tenant, source string) {
	t.Helper()
	ctx := context.Background()
	if err := b.pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ($1) RETURNING id`, name).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	err := b.pool.QueryRow(ctx, `INSERT INTO sources (tenant_id, kind, account) VALUES ($1, 'stripe', $2) RETURNING id`,
		tenant, "acct_"+name).Scan(&source)
	if err != nil {
		t.Fatal(err)
	}
	return tenant, source
}

// row is an inbox row to seed.
type row struct {
	tenant, source, eventID, eventType, objectID string
	status                                       inbox.Status
	at                                           time.Time
}

// seed writes inbox rows (and their payloads) as ingest would, and
// returns their ids in order.
func (b *bundle) seed(t *testing.T, rows ...row) []int64 {
	t.Helper()
	var ids []int64
	for _, r := range rows {
		var id int64
		err := b.pool.QueryRow(context.Background(), `
			WITH i AS (
				INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, object_type, object_id,
				                   received_at, status, body_sha256)
				SELECT $1, $2, s.account, $3, $4, 'invoice', $5, $6, $7, '\x00' FROM sources s WHERE s.id = $2
				RETURNING id, received_at
			), p AS (
				INSERT INTO inbox_payloads (inbox_id, received_at, body) SELECT id, received_at, $8 FROM i
			)
			SELECT id FROM i`, r.tenant, r.source, r.eventID, r.eventType, r.objectID, r.at, string(r.status),
			[]byte(`{"id":"`+r.eventID+`"}`)).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func ids(events []operate.Event) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

// Each filter of the inbox search selects exactly its rows, newest first,
// and pages by cursor without losing or repeating a row.
func TestSearchFiltersSelectExactlyTheirRows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	seeded := b.seed(t,
		row{b.tenantA, b.sourceA, "evt_1", "stripe.invoice.paid", "in_1", inbox.StatusPublished, now.Add(-50 * time.Minute)},
		row{b.tenantA, b.sourceA, "evt_2", "stripe.charge.refunded", "in_1", inbox.StatusPublished, now.Add(-40 * time.Minute)},
		row{b.tenantA, b.sourceA, "evt_3", "stripe.invoice.paid", "in_2", inbox.StatusQuarantined, now.Add(-30 * time.Minute)},
		row{b.tenantB, b.sourceB, "evt_1", "stripe.invoice.paid", "in_9", inbox.StatusPublished, now.Add(-20 * time.Minute)},
		row{b.tenantB, b.sourceB, "evt_5", "stripe.invoice.paid", "in_1", inbox.StatusUnhandled, now.Add(-10 * time.Minute)},
	)
	a1, a2, a3, b1, b5 := seeded[0], seeded[1], seeded[2], seeded[3], seeded[4]
	tenantB := &operate.Scope{TenantID: b.tenantB}
	for _, tc := range []struct {
		name  string
		scope *operate.Scope
		f     operate.SearchFilter
		want  []int64
	}{
		{"event id across sources", nil, operate.SearchFilter{EventID: "evt_1"}, []int64{b1, a1}},
		{"event id, scoped", tenantB, operate.SearchFilter{EventID: "evt_1"}, []int64{b1}},
		{"tenant", nil, operate.SearchFilter{TenantID: b.tenantA}, []int64{a3, a2, a1}},
		{"source", nil, operate.SearchFilter{SourceID: b.sourceB}, []int64{b5, b1}},
		{"object id", nil, operate.SearchFilter{ObjectID: "in_1"}, []int64{b5, a2, a1}},
		{"type", nil, operate.SearchFilter{TenantID: b.tenantA, EventType: "stripe.invoice.paid"}, []int64{a3, a1}},
		{"status", nil, operate.SearchFilter{Status: inbox.StatusQuarantined}, []int64{a3}},
		{"status published", nil, operate.SearchFilter{TenantID: b.tenantB, Status: inbox.StatusPublished}, []int64{b1}},
		{"time range", nil, operate.SearchFilter{Since: now.Add(-45 * time.Minute), Until: now.Add(-20 * time.Minute)}, []int64{a3, a2}},
		{"tenant and time range", nil, operate.SearchFilter{TenantID: b.tenantA, Since: now.Add(-35 * time.Minute)}, []int64{a3}},
		{"scoped caller naming another tenant", tenantB, operate.SearchFilter{TenantID: b.tenantA}, []int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := b.op.Search(ctx, tc.scope, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Items); !slices.Equal(got, tc.want) {
				t.Errorf("ids = %v, want %v", got, tc.want)
			}
		})
	}

	var paged []int64
	f := operate.SearchFilter{ObjectID: "in_1", Limit: 1}
	for range 10 {
		p, err := b.op.Search(ctx, nil, f)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, ids(p.Items)...)
		if p.Next == "" {
			break
		}
		f.After = p.Next
	}
	if want := []int64{b5, a2, a1}; !slices.Equal(paged, want) {
		t.Errorf("paged ids = %v, want %v", paged, want)
	}

	for name, f := range map[string]operate.SearchFilter{
		"nothing selective": {EventType: "stripe.invoice.paid"},
		"bad tenant":        {TenantID: "nope"},
		"bad status":        {TenantID: b.tenantA, Status: "lost"},
		"bad cursor":        {TenantID: b.tenantA, After: "!!"},
		"limit too large":   {TenantID: b.tenantA, Limit: operate.MaxLimit + 1},
	} {
		if _, err := b.op.Search(ctx, nil, f); !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// A tenant-scoped caller gets ErrNotFound for another tenant's event, its
// payload and its dead letter, the same answer as for ids that do not
// exist; its own are found.
func TestScopedCallerGetsNotFoundForAnotherTenantsIDs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Now().UTC()
	seeded := b.seed(t,
		row{b.tenantA, b.sourceA, "evt_a", "stripe.invoice.paid", "in_a", inbox.StatusPublished, now},
		row{b.tenantB, b.sourceB, "evt_b", "stripe.invoice.paid", "in_b", inbox.StatusPublished, now},
	)
	letterA := b.deadLetter(t, "credits", b.tenantA, b.sourceA, "evt_a", seeded[0], `{}`)
	scopeB := &operate.Scope{TenantID: b.tenantB}

	for name, call := range map[string]func(*operate.Scope) error{
		"trail":   func(s *operate.Scope) error { _, err := b.op.Trail(ctx, s, seeded[0]); return err },
		"payload": func(s *operate.Scope) error { _, err := b.op.EventPayload(ctx, s, seeded[0]); return err },
		"dead letter": func(s *operate.Scope) error {
			_, err := b.op.DeadLetter(ctx, s, letterA)
			return err
		},
		"replay dead letter": func(s *operate.Scope) error { return b.op.ReplayDeadLetter(ctx, s, letterA) },
	} {
		if err := call(scopeB); !errors.Is(err, refusal.ErrNotFound) {
			t.Errorf("%s of tenant A as tenant B: err = %v, want ErrNotFound", name, err)
		}
		if err := call(&operate.Scope{TenantID: b.tenantA}); errors.Is(err, refusal.ErrNotFound) {
			t.Errorf("%s of tenant A as tenant A: %v", name, err)
		}
	}
	detail, err := b.op.DeadLetter(ctx, &operate.Scope{TenantID: b.tenantA}, letterA)
	if err != nil {
		t.Fatal(err)
	}
	if detail.Headers["ce_id"] != "evt_a" || string(detail.Payload.Body) != `{}` || detail.InboxID != fmt.Sprint(seeded[0]) {
		t.Errorf("dead letter detail = %+v", detail)
	}
	p, err := b.op.DeadLetters(ctx, scopeB, operate.DeadLetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 0 {
		t.Errorf("tenant B lists %d dead letters of tenant A", len(p.Items))
	}
	if _, err := b.op.Trail(ctx, nil, 1<<40); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("trail of an unknown id: %v, want ErrNotFound", err)
	}
	if _, err := b.op.Rewind(ctx, scopeB, "x", operateTarget(), false); !errors.Is(err, refusal.ErrForbidden) {
		t.Errorf("rewind as a scoped caller: %v, want a forbidden refusal", err)
	}
	if _, err := b.op.Slot(ctx, scopeB); !errors.Is(err, refusal.ErrForbidden) {
		t.Errorf("slot as a scoped caller: %v, want a forbidden refusal", err)
	}
	pay, err := b.op.EventPayload(ctx, nil, seeded[1])
	if err != nil || pay.State != operate.PayloadKept || string(pay.Body) != `{"id":"evt_b"}` {
		t.Errorf("payload = %+v, %v", pay, err)
	}
}

// deadLetter stores a dead letter of group (a subscriptions-topic record
// of tenant's event) as the consumer runtime would, and returns its id.
func (b *bundle) deadLetter(t *testing.T, group, tenant, source, eventID string, inboxID int64, body string) int64 {
	t.Helper()
	ev := envelope.Event{ID: eventID, Source: envelope.SourceURI(tenant, source), Type: "stripe.customer.subscription.updated",
		TenantID: tenant, SourceAccount: "acct_x", PartitionKey: "k", InboxID: fmt.Sprint(inboxID)}
	var id int64
	err := b.pool.QueryRow(context.Background(), `
		INSERT INTO dead_letters (consumer_group, topic, partition, "offset", key, headers, payload, reason, attempts,
		                          first_failed_at, last_failed_at)
		VALUES ($1, $2, 0, nextval('inbox_id_seq'), 'k', $3, $4, 'subscription has no status', 3, now(), now())
		RETURNING id`, b.topics.Resource(group), b.topics.Resource("subscriptions"), ev.Headers(), []byte(body)).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
