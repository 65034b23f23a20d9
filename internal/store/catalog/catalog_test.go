package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/testenv"
)

// pool is the package's database: tests isolate themselves by tenant.
var pool *pgxpool.Pool

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	services, err := testenv.Find()
	if err != nil {
		fmt.Fprintln(os.Stderr, "catalog tests:", err)
		return 1
	}
	db, err := services.NewDatabase(context.Background(), "catalog")
	if err != nil {
		fmt.Fprintln(os.Stderr, "catalog tests:", err)
		return 1
	}
	defer db.Drop()
	if pool, err = pg.Connect(context.Background(), db.URL, 8); err != nil {
		fmt.Fprintln(os.Stderr, "catalog tests:", err)
		return 1
	}
	defer pool.Close()
	return m.Run()
}

var topics = envelope.Topics{Prefix: "cat"}

func newStore(t *testing.T, cfg catalog.Config) *catalog.Store {
	t.Helper()
	cfg.Topics = topics
	if cfg.Providers == nil {
		cfg.Providers = kinds.Builtin()
	}
	s, err := catalog.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newTenant(t *testing.T) string {
	t.Helper()
	var id string
	if err := pool.QueryRow(context.Background(), `INSERT INTO tenants (name) VALUES ($1) RETURNING id::text`, t.Name()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// newSource makes a source of kind for tenant, as its rows need one.
func newSource(t *testing.T, tenant, kind string) string {
	t.Helper()
	var id string
	if err := pool.QueryRow(context.Background(), `INSERT INTO sources (tenant_id, kind, account) VALUES ($1, $2, $3) RETURNING id::text`,
		tenant, kind, "acct-"+uuid.NewString()[:8]).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

const orderSchema = `{"type":"object","required":["id","order"],"properties":{"id":{"type":"string"},
	"order":{"type":"object","required":["ref"],"properties":{"ref":{"type":"string"},"total":{"type":"integer"}}}}}`

func orderSpec(tenant string) catalog.Spec {
	return catalog.Spec{TenantID: tenant, Kind: "hmac", Type: "order.placed", Schema: []byte(orderSchema),
		ObjectID: "/order/ref", ResourceType: "order", Compatible: true}
}

// code is the refusal's code as -o json prints it (its sub-kind, or its
// kind: invalid, builtin, quota, not_found, incompatible, conflict).
func code(err error) string {
	if r, ok := refusal.Of(err); ok {
		return r.Name()
	}
	return ""
}

func TestCreateRefusesWhatCouldNeverWorkWithAnActionableError(t *testing.T) {
	t.Parallel()
	s := newStore(t, catalog.Config{MaxSchemaBytes: 4096})
	tenant := newTenant(t)
	with := func(f func(*catalog.Spec)) catalog.Spec {
		sp := orderSpec(tenant)
		f(&sp)
		return sp
	}
	cases := map[string]struct {
		spec catalog.Spec
		code string
		says string
	}{
		"shadows a built-in stripe type":   {with(func(s *catalog.Spec) { s.Kind, s.Type = "stripe", "invoice.paid" }), "builtin", "built-in"},
		"shadows a built-in feedback type": {with(func(s *catalog.Spec) { s.Kind, s.Type = "standard_webhooks", "feedback.created" }), "builtin", "built-in"},
		"remote $ref": {with(func(s *catalog.Spec) {
			s.Schema = []byte(`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)
		}), "invalid", "$defs"},
		"file $ref":             {with(func(s *catalog.Spec) { s.Schema = []byte(`{"$ref":"file:///etc/passwd"}`) }), "invalid", "$ref"},
		"relative $ref outside": {with(func(s *catalog.Spec) { s.Schema = []byte(`{"$ref":"other.json"}`) }), "invalid", "$ref"},
		"schema too large": {with(func(s *catalog.Spec) {
			s.Schema = []byte(`{"description":"` + strings.Repeat("x", 5000) + `"}`)
		}), "invalid", "more than the 4096 allowed"},
		"schema not json":                 {with(func(s *catalog.Spec) { s.Schema = []byte(`{"type":`) }), "invalid", "not JSON"},
		"schema does not compile":         {with(func(s *catalog.Spec) { s.Schema = []byte(`{"type":"objekt"}`) }), "invalid", "schema"},
		"older draft":                     {with(func(s *catalog.Spec) { s.Schema = []byte(`{"$schema":"http://json-schema.org/draft-07/schema#"}`) }), "invalid", "2020-12"},
		"bad type name":                   {with(func(s *catalog.Spec) { s.Type = "order placed!" }), "invalid", "letters, digits"},
		"unknown kind":                    {with(func(s *catalog.Spec) { s.Kind = "paypal" }), "invalid", "want one of api"},
		"pointer without slash":           {with(func(s *catalog.Spec) { s.ObjectID = "order.ref" }), "invalid", "JSON pointer"},
		"bad escape":                      {with(func(s *catalog.Spec) { s.ObjectID = "/a~2b" }), "invalid", "~0"},
		"header on api":                   {with(func(s *catalog.Spec) { s.Kind, s.ObjectID = "api", "header:X-Id" }), "invalid", "no headers"},
		"format without time":             {with(func(s *catalog.Spec) { s.EventTimeFormat = "rfc3339" }), "invalid", "needs event_time_at"},
		"resource outside the vocabulary": {with(func(s *catalog.Spec) { s.ResourceType = "invoices" }), "invalid", "not a resource type of this deployment"},
		"resource naming another topic":   {with(func(s *catalog.Spec) { s.ResourceType = "../invoices" }), "invalid", "lowercase"},
		"resource with a dot":             {with(func(s *catalog.Spec) { s.ResourceType = "x.invoices" }), "invalid", "lowercase"},
		"tenant not a uuid":               {with(func(s *catalog.Spec) { s.TenantID = "acme" }), "invalid", "not a tenant id"},
		"no such tenant":                  {with(func(s *catalog.Spec) { s.TenantID = uuid.NewString() }), "not_found", "no tenant"},
	}
	for name, tc := range cases {
		_, err := s.Create(context.Background(), tc.spec)
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v (code %q), want code %q saying %q", name, err, code(err), tc.code, tc.says)
		}
		if err != nil && strings.Contains(err.Error(), "SQLSTATE") {
			t.Errorf("%s: driver text reached the caller: %v", name, err)
		}
	}
	if list, err := s.List(context.Background(), tenant, catalog.Filter{Deprecated: true}); err != nil || len(list) != 0 {
		t.Fatalf("refused specs stored something: %v %v", list, err)
	}
}

func TestQuotaCountsTypesPerTenant(t *testing.T) {
	t.Parallel()
	s := newStore(t, catalog.Config{MaxTypesPerTenant: 3})
	ctx := context.Background()
	tenant, other := newTenant(t), newTenant(t)
	for i := range 3 {
		sp := orderSpec(tenant)
		sp.Type = fmt.Sprintf("order.t%d", i)
		if _, err := s.Create(ctx, sp); err != nil {
			t.Fatal(err)
		}
	}
	sp := orderSpec(tenant)
	sp.Type = "order.t3"
	if _, err := s.Create(ctx, sp); !errors.Is(err, catalog.ErrQuota) {
		t.Fatalf("fourth type: %v, want the quota", err)
	}
	// A new version of a declared type is not a new type.
	sp.Type, sp.Schema = "order.t0", []byte(`{"type":"object"}`)
	if _, err := s.Create(ctx, sp); err != nil {
		t.Fatalf("new version at the quota: %v", err)
	}
	// Another tenant has its own quota.
	if _, err := s.Create(ctx, orderSpec(other)); err != nil {
		t.Fatalf("other tenant: %v", err)
	}
}

func TestConcurrentCreatesKeepTheQuota(t *testing.T) {
	t.Parallel()
	s := newStore(t, catalog.Config{MaxTypesPerTenant: 5})
	tenant := newTenant(t)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
	)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sp := orderSpec(tenant)
			sp.Type = fmt.Sprintf("order.c%d", i)
			_, err := s.Create(context.Background(), sp)
			if err != nil && !errors.Is(err, catalog.ErrQuota) {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				created++
			}
		}()
	}
	wg.Wait()
	if created != 5 {
		t.Fatalf("%d types created concurrently, quota 5", created)
	}
}

func TestVersionsListShowAndDeprecate(t *testing.T) {
	t.Parallel()
	s := newStore(t, catalog.Config{})
	ctx := context.Background()
	tenant := newTenant(t)
	v1, err := s.Create(ctx, orderSpec(tenant))
	if err != nil || !v1.New || v1.Version != 1 {
		t.Fatalf("v1: %+v %v", v1, err)
	}
	if want := "sluice:eventtype/" + tenant + "/hmac/order.placed/v1"; v1.DataSchema != want || v1.Topic != "cat.tenant.order" {
		t.Fatalf("v1 dataschema %q topic %q, want %q and cat.tenant.order", v1.DataSchema, v1.Topic, want)
	}
	again, err := s.Create(ctx, orderSpec(tenant))
	if err != nil || again.New || again.Version != 1 {
		t.Fatalf("the same spec again: %+v %v, want v1 unchanged", again, err)
	}
	sp := orderSpec(tenant)
	sp.ResourceType = "payment"
	if _, err := s.Create(ctx, sp); code(err) != "invalid" || !strings.Contains(err.Error(), "for life") {
		t.Fatalf("resource type change: %v", err)
	}
	sp = orderSpec(tenant)
	sp.Schema = []byte(`{"type":"object","required":["id"]}`) // looser: compatible with nothing stored
	v2, err := s.Create(ctx, sp)
	if err != nil || v2.Version != 2 || !v2.Compatible {
		t.Fatalf("v2: %+v %v", v2, err)
	}
	versions, err := s.Show(ctx, tenant, "hmac", "order.placed")
	if err != nil || len(versions) != 2 || versions[0].Version != 1 || versions[1].Version != 2 {
		t.Fatalf("show: %+v %v", versions, err)
	}
	if _, err := s.Show(ctx, tenant, "hmac", "order.lost"); !errors.Is(err, refusal.ErrNotFound) {
		t.Fatalf("show of an unknown type: %v", err)
	}
	if _, err := s.Deprecate(ctx, tenant, "hmac", "order.placed"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(ctx, tenant, catalog.Filter{}); len(list) != 0 {
		t.Fatalf("list shows a deprecated type: %+v", list)
	}
	if list, _ := s.List(ctx, tenant, catalog.Filter{Deprecated: true}); len(list) != 1 || list[0].Status != catalog.StatusDeprecated || list[0].Version != 2 {
		t.Fatalf("list --all: %+v", list)
	}
	// Ingest still reads it: deprecation never stops a sender.
	types, err := s.Types(ctx, tenant)
	if m, ok := types[catalog.TypeKey("hmac", "order.placed")]; err != nil || !ok || m.Version != 2 {
		t.Fatalf("types: %+v %v", types, err)
	}
	sp.Schema = []byte(`{"type":"object"}`)
	if v3, err := s.Create(ctx, sp); err != nil || v3.Status != catalog.StatusActive || v3.Version != 3 {
		t.Fatalf("v3 after deprecation: %+v %v", v3, err)
	}
}

// accept stores an event as ingest does (inbox row and payload), with the
// given status and, when published, the version that validated it.
func accept(t *testing.T, tenant, source, typ, status string, versionID int64, body string) int64 {
	t.Helper()
	var vid *int64
	if versionID != 0 {
		vid = &versionID
	}
	var id int64
	err := pool.QueryRow(context.Background(), `WITH i AS (
		INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, status, body_sha256, event_type_version_id)
		SELECT $1, $2, s.account, $3, $4, $5, sha256($6::bytea), $7 FROM sources s WHERE s.id = $2 RETURNING id, received_at)
		INSERT INTO inbox_payloads (inbox_id, received_at, body) SELECT id, received_at, $6::bytea FROM i RETURNING inbox_id`,
		tenant, source, uuid.NewString(), typ, status, []byte(body), vid).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// declared is a tenant with an hmac source and order.placed v1.
func declared(t *testing.T, s *catalog.Store) (tenant, source string, v1 catalog.Created) {
	t.Helper()
	tenant = newTenant(t)
	source = newSource(t, tenant, "hmac")
	v1, err := s.Create(context.Background(), orderSpec(tenant))
	if err != nil {
		t.Fatal(err)
	}
	return tenant, source, v1
}

func TestIncompatibleVersionIsRefusedWithTheCountOfEventsItWouldRefuse(t *testing.T) {
	t.Parallel()
	s := newStore(t, catalog.Config{})
	ctx := context.Background()
	tenant, source, v1 := declared(t, s)
	for i := range 7 {
		total := ""
		if i < 4 {
			total = `,"total":12`
		}
		accept(t, tenant, source, "order.placed", "published", v1.VersionID, fmt.Sprintf(`{"id":"e%d","order":{"ref":"o%d"%s}}`, i, i, total))
	}
	// Another tenant's events of the same name are none of this type's.
	otherTenant := newTenant(t)
	accept(t, otherTenant, newSource(t, otherTenant, "hmac"), "order.placed", "published", 0, `{"id":"x"}`)

	sp := orderSpec(tenant)
	sp.Schema = []byte(`{"type":"object","required":["id","order"],"properties":{"order":{"type":"object","required":["ref","total"]}}}`)
	_, err := s.Create(ctx, sp)
	var ce *catalog.IncompatibleError
	if !errors.As(err, &ce) || code(err) != "incompatible" || ce.Refused != 3 || ce.Checked != 7 || len(ce.Examples) != 3 {
		t.Fatalf("incompatible v2: %v (%+v), want 3 of 7 refused", err, ce)
	}
	if !strings.Contains(ce.Message, "3 of the 7") || !strings.Contains(ce.Examples[0].Reason, "total") {
		t.Fatalf("message %q, first reason %q", ce.Message, ce.Examples[0].Reason)
	}
	if vs, _ := s.Show(ctx, tenant, "hmac", "order.placed"); len(vs) != 1 {
		t.Fatalf("a refused version was stored: %d versions", len(vs))
	}
	// An object id pointer that stored events lack is a break too.
	sp = orderSpec(tenant)
	sp.ObjectID = "/order/missing"
	if _, err := s.Create(ctx, sp); !errors.Is(err, catalog.ErrIncompatible) {
		t.Fatalf("pointer break: %v", err)
	}
	// Declared as a break, it is stored.
	sp.ObjectID, sp.Compatible = "/order/ref", false
	sp.Schema = []byte(`{"type":"object","required":["id","order"],"properties":{"order":{"type":"object","required":["ref","total"]}}}`)
	if v2, err := s.Create(ctx, sp); err != nil || v2.Compatible || v2.Version != 2 {
		t.Fatalf("declared break: %+v %v", v2, err)
	}
}

func TestCompatCheckIsBounded(t *testing.T) {
	t.Parallel()
	s := newStore(t, catalog.Config{CompatCheckLimit: 3})
	ctx := context.Background()
	tenant, source, v1 := declared(t, s)
	for i := range 5 {
		accept(t, tenant, source, "order.placed", "published", v1.VersionID, fmt.Sprintf(`{"id":"e%d","order":{"ref":"o"}}`, i))
	}
	sp := orderSpec(tenant)
	sp.Schema = []byte(`{"type":"object"}`)
	v2, err := s.Create(ctx, sp)
	if err != nil || v2.Checked != 3 {
		t.Fatalf("v2: checked %d (%v), want the bound 3", v2.Checked, err)
	}
}

func TestReleasePublishesEachKeptEventOnceUnderConcurrentReleases(t *testing.T) {
	t.Parallel()
	s := newStore(t, catalog.Config{ReleaseBatch: 7})
	ctx := context.Background()
	tenant, other := newTenant(t), newTenant(t)
	source, otherSource := newSource(t, tenant, "hmac"), newSource(t, other, "hmac")
	for i := range 40 {
		body := fmt.Sprintf(`{"id":"e%d","order":{"ref":"o%d"}}`, i, i)
		if i%10 == 0 {
			body = fmt.Sprintf(`{"id":"e%d"}`, i) // fails the schema: stays kept, quarantined
		}
		status := "unhandled"
		if i%4 == 1 {
			status = "quarantined"
		}
		accept(t, tenant, source, "order.placed", status, 0, body)
	}
	accept(t, other, otherSource, "order.placed", "unhandled", 0, `{"id":"x","order":{"ref":"o"}}`)
	if _, err := s.Release(ctx, tenant, "hmac", "order.placed"); !errors.Is(err, refusal.ErrNotFound) {
		t.Fatalf("release before the type exists: %v", err)
	}
	if _, err := s.Create(ctx, orderSpec(tenant)); err != nil {
		t.Fatal(err)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		released int
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.Release(ctx, tenant, "hmac", "order.placed")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			released += r.Released
			mu.Unlock()
		}()
	}
	wg.Wait()
	if released != 36 {
		t.Fatalf("concurrent releases published %d, want 36", released)
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT count(*) FROM outbox o JOIN inbox i ON i.id = o.inbox_id WHERE i.tenant_id = $1`, tenant); n != 36 {
		t.Fatalf("%d outbox rows, want 36", n)
	}
	if n := count(`SELECT count(*) FROM inbox WHERE tenant_id = $1 AND status = 'quarantined' AND reason LIKE '%order%'`, tenant); n != 4 {
		t.Fatalf("%d still-failing events quarantined with a reason, want 4", n)
	}
	if n := count(`SELECT count(*) FROM outbox WHERE topic = 'cat.tenant.order' AND headers->>'ce_tenantid' = $1
		AND headers->>'ce_dataschema' = $2 AND key = convert_to($1 || '/order/o3', 'UTF8')`, tenant, envelope.DataSchemaURI(tenant, "hmac", "order.placed", 1)); n != 1 {
		t.Fatalf("record of o3: %d with the shared topic, key and dataschema, want 1", n)
	}
	if n := count(`SELECT count(*) FROM inbox WHERE tenant_id = $1 AND status <> 'published'`, other); n != 1 {
		t.Fatal("another tenant's event of the same name was released")
	}
	again, err := s.Release(ctx, tenant, "hmac", "order.placed")
	if err != nil || again.Released != 0 || again.Quarantined != 4 {
		t.Fatalf("second release: %+v %v, want none released and the 4 still failing", again, err)
	}
}
