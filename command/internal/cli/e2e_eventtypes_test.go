package cli

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/adminclient"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Tenants' own event types, end to end: declared in the runtime catalogue,
// validated and routed by the running pipeline to the shared topic of their
// resource type, read back from Kafka.

const orderPlacedSchema = `{"type":"object","required":["id","type","order"],"properties":{
	"id":{"type":"string"},"type":{"const":"order.placed"},"at":{"type":"string"},
	"order":{"type":"object","required":["ref","total"],"properties":{"ref":{"type":"string"},"total":{"type":"integer","minimum":0}}}}}`

func catalogStore(t *testing.T) *catalog.Store {
	t.Helper()
	s, err := catalog.New(suite.pool, catalog.Config{Topics: suite.topics, Providers: kinds.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hmacTenant is a tenant with a generic HMAC source: signature in
// X-Signature (hex SHA-256 of the body), event id and type in the body.
type hmacTenant struct {
	tenantID, sourceID, secret string
}

func newHMACTenant(t *testing.T) hmacTenant {
	t.Helper()
	ctx := context.Background()
	tenantID, err := suite.store.CreateTenant(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	secret := "s3cret-" + testenv.RandomSuffix()
	sourceID, err := suite.store.CreateSource(ctx, hmacSource(tenantID, secret))
	if err != nil {
		t.Fatal(err)
	}
	return hmacTenant{tenantID: tenantID, sourceID: sourceID, secret: secret}
}

// hmacSource is a generic HMAC source of tenant signing with secret.
func hmacSource(tenantID, secret string) tenancy.NewSource {
	return tenancy.NewSource{TenantID: tenantID, Kind: "hmac", Account: "shop-" + testenv.RandomSuffix(),
		Secret: secret, Settings: []byte(`{"header":"X-Signature","algorithm":"sha256","encoding":"hex","eventId":"/id","eventType":"/type"}`)}
}

func (h hmacTenant) send(t *testing.T, body []byte) int {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(h.secret))
	mac.Write(body)
	return postHeaders(t, h.sourceID, body, map[string]string{"X-Signature": hex.EncodeToString(mac.Sum(nil))})
}

func (h hmacTenant) declareOrders(t *testing.T, s *catalog.Store) catalog.Entry {
	t.Helper()
	c, err := s.Create(context.Background(), catalog.Spec{TenantID: h.tenantID, Kind: "hmac", Type: "order.placed",
		Schema: []byte(orderPlacedSchema), ObjectID: "/order/ref", EventTime: "/at", EventTimeFormat: "rfc3339", ResourceType: "order"})
	if err != nil {
		t.Fatal(err)
	}
	return c.Entry
}

func orderPlaced(id, ref string, total any) []byte {
	return fmt.Appendf(nil, `{"id":%q,"type":"order.placed","at":"2026-11-30T10:00:00Z","order":{"ref":%q,"total":%v}}`, id, ref, total)
}

func TestTenantTypeFromHMACSourceReachesTheSharedTopicWithCloudEventsHeaders(t *testing.T) {
	t.Parallel()
	h := newHMACTenant(t)
	entry := h.declareOrders(t, catalogStore(t))
	s := testenv.RandomSuffix()
	ids := []string{"ord-a-" + s, "ord-b-" + s, "ord-c-" + s}
	bodies := map[string][]byte{}
	for i, id := range ids {
		// Other whitespace than a serialiser would write: the value must be
		// these bytes, exactly.
		bodies[id] = append(orderPlaced(id, fmt.Sprintf("o-%d-%s", i, s), 10*i), "\n  "...)
		if code := h.send(t, bodies[id]); code != http.StatusAccepted {
			t.Fatalf("%s: %d", id, code)
		}
	}
	bad := "ord-bad-" + s
	if code := h.send(t, orderPlaced(bad, "o-bad", -5)); code != http.StatusAccepted {
		t.Fatalf("failing event: %d, want 202 (kept in quarantine)", code)
	}
	topic := suite.topics.Tenant("order")
	recs := recordsFor(t, topic, len(ids), ids...)
	for i, id := range ids {
		var r = recs[0]
		for _, rec := range recs {
			if headerMap(rec)[envelope.HeaderID] == id {
				r = rec
			}
		}
		hm := headerMap(r)
		ref := fmt.Sprintf("o-%d-%s", i, s)
		want := map[string]string{
			envelope.HeaderSpecVersion: "1.0", envelope.HeaderID: id, envelope.HeaderType: "hmac.order.placed",
			envelope.HeaderSource: envelope.SourceURI(h.tenantID, h.sourceID), envelope.HeaderSubject: ref,
			envelope.HeaderTime: "2026-11-30T10:00:00Z", envelope.HeaderTenantID: h.tenantID,
			envelope.HeaderPartitionKey: h.tenantID + "/order/" + ref, envelope.HeaderContentType: "application/json",
			envelope.HeaderDataSchema: entry.DataSchema,
		}
		for k, v := range want {
			if hm[k] != v {
				t.Errorf("%s: header %s = %q, want %q", id, k, hm[k], v)
			}
		}
		if !bytes.Equal(r.Value, bodies[id]) || string(r.Key) != h.tenantID+"/order/"+ref {
			t.Errorf("%s: value %q key %q, want the exact body and key", id, r.Value, r.Key)
		}
	}
	var status, reason string
	if err := suite.pool.QueryRow(context.Background(), `SELECT status, reason FROM inbox WHERE tenant_id = $1 AND event_id = $2`,
		h.tenantID, bad).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if status != "quarantined" || !strings.Contains(reason, "order.placed v1") || !strings.Contains(reason, "/order/total") {
		t.Fatalf("failing event: %s %q, want quarantined naming the type and the field", status, reason)
	}
	if n := count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND status = 'published' AND event_type_version_id = $2`,
		h.tenantID, entry.VersionID); n != len(ids) {
		t.Fatalf("%d published events record version %d, want %d", n, entry.VersionID, len(ids))
	}
	// Nothing of the tenant's went anywhere but its resource type's shared topic.
	if n := count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1 AND topic <> $2`, h.tenantID, topic); n != 0 {
		t.Fatalf("%d records outside %s", n, topic)
	}
}

// postEvents sends a POST /v1/events batch and returns the status and the
// results.
func postEvents(t *testing.T, key string, events []json.RawMessage) (int, []map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"events": events})
	req, _ := http.NewRequest(http.MethodPost, suite.baseURL+"/v1/events", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Results []map[string]any `json:"results"`
	}
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out.Results
}

func TestAPIBatchOfARegisteredTypeIsPublishedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tenantID, err := suite.store.CreateTenant(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := suite.store.CreateAPIKey(ctx, tenantID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := catalogStore(t).Create(ctx, catalog.Spec{TenantID: tenantID, Kind: "api", Type: "ticket.opened", ResourceType: "ticket",
		Schema: []byte(`{"type":"object","required":["data"],"properties":{"data":{"type":"object","required":["title"]}}}`)}); err != nil {
		t.Fatal(err)
	}
	s := testenv.RandomSuffix()
	events := make([]json.RawMessage, 1000)
	ids := make([]string, len(events))
	for i := range events {
		ids[i] = fmt.Sprintf("tk-%s-%d", s, i)
		events[i] = fmt.Appendf(nil, `{"id":%q,"type":"ticket.opened","object_id":"T%d","time":"2026-11-30T10:00:00Z","data":{"title":"t%d"}}`, ids[i], i%50, i)
	}
	status, results := postEvents(t, key, events)
	if status != http.StatusOK || len(results) != 1000 {
		t.Fatalf("batch: %d, %d results", status, len(results))
	}
	for _, r := range results {
		if r["outcome"] != "accepted" {
			t.Fatalf("result %v, want accepted", r)
		}
	}
	recordsFor(t, suite.topics.Tenant("ticket"), 1000, ids...)
	status, results = postEvents(t, key, events)
	if status != http.StatusOK || results[0]["outcome"] != "duplicate" || results[999]["outcome"] != "duplicate" {
		t.Fatalf("same batch again: %d %v", status, results[0])
	}
	if n := count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1`, tenantID); n != 1000 {
		t.Fatalf("%d outbox rows after the batch twice, want 1000", n)
	}
}

func TestKeptEventsAreReleasedOnceTheirTypeExists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHMACTenant(t)
	s := testenv.RandomSuffix()
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("rel-%s-%d", s, i)
		if code := h.send(t, orderPlaced(ids[i], fmt.Sprintf("o%d", i%10), i)); code != http.StatusAccepted {
			t.Fatalf("%s: %d", ids[i], code)
		}
	}
	if n := count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND status = 'unhandled'`, h.tenantID); n != 100 {
		t.Fatalf("%d unhandled before the type exists, want 100", n)
	}
	// Declared and released over the admin API with the Go client
	// (adminclient), as an operator's backend would.
	c, err := adminclient.New(suite.adminURL, adminToken(t, admintoken.RoleOperate, h.tenantID))
	if err != nil {
		t.Fatal(err)
	}
	tenant := uuid.MustParse(h.tenantID)
	objectAt, timeAt, format := "/order/ref", "/at", adminclient.Rfc3339
	var schema map[string]any
	if err := json.Unmarshal([]byte(orderPlacedSchema), &schema); err != nil {
		t.Fatal(err)
	}
	made, err := c.CreateEventTypeWithResponse(ctx, tenant, nil, adminclient.NewEventTypeBody{SourceKind: "hmac", EventType: "order.placed",
		Schema: schema, ObjectIdAt: &objectAt, EventTimeAt: &timeAt, EventTimeFormat: &format, ResourceType: "order"})
	if err != nil || made.JSON201.Version != 1 {
		t.Fatalf("create over HTTP: %v", err)
	}
	entry := made.JSON201
	release := func() adminclient.Released {
		t.Helper()
		r, err := c.ReleaseEventTypeWithResponse(ctx, tenant, "hmac", "order.placed")
		if err != nil {
			t.Fatalf("release over HTTP: %v", err)
		}
		return *r.JSON200
	}
	if r := release(); r.Released != 100 {
		t.Fatalf("release: %+v, want 100", r)
	}
	recs := recordsFor(t, suite.topics.Tenant("order"), 100, ids...)
	for _, rec := range recs {
		if hm := headerMap(rec); hm[envelope.HeaderDataSchema] != entry.Dataschema || hm[catalog.HeaderReleased] != "true" {
			t.Fatalf("released record headers %v", hm)
		}
	}
	if again := release(); again.Released != 0 {
		t.Fatalf("second release: %+v, want none", again)
	}
	if n := count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1`, h.tenantID); n != 100 {
		t.Fatalf("%d outbox rows after two releases, want 100", n)
	}
}

func TestOneTenantsTypeNeverAppliesToAnotherTenant(t *testing.T) {
	t.Parallel()
	owner, other := newHMACTenant(t), newHMACTenant(t)
	store := catalogStore(t)
	owner.declareOrders(t, store)
	s := testenv.RandomSuffix()
	mine, theirs := "own-"+s, "other-"+s
	if code := owner.send(t, orderPlaced(mine, "o1", 1)); code != http.StatusAccepted {
		t.Fatal(code)
	}
	// Same type name, and a body the owner's schema would refuse: the
	// other tenant has no such type, so it is kept unhandled, not judged.
	if code := other.send(t, orderPlaced(theirs, "o1", -1)); code != http.StatusAccepted {
		t.Fatal(code)
	}
	recordsFor(t, suite.topics.Tenant("order"), 1, mine)
	var status string
	if err := suite.pool.QueryRow(context.Background(), `SELECT status FROM inbox WHERE tenant_id = $1 AND event_id = $2`, other.tenantID, theirs).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if status != "unhandled" {
		t.Fatalf("other tenant's event is %s, want unhandled", status)
	}
	if r, err := store.Release(context.Background(), other.tenantID, "hmac", "order.placed"); err == nil || r.Released != 0 {
		t.Fatalf("release for a tenant without the type: %+v %v", r, err)
	}
	if n := count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1`, other.tenantID); n != 0 {
		t.Fatalf("other tenant published %d records", n)
	}
}

func TestTenantCannotShadowBuiltinTypesNorRouteIntoSluiceTopics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newTenant(t) // a Stripe source and a workspace
	store := catalogStore(t)
	// invoice.paid is built in for stripe: refused, and the tenant's
	// invoices keep flowing through the built-in schema to sluice.invoices.
	_, err := store.Create(ctx, catalog.Spec{TenantID: f.tenantID, Kind: "stripe", Type: "invoice.paid", ResourceType: "order",
		Schema: []byte(`{"type":"object"}`)})
	if !errors.Is(err, catalog.ErrBuiltin) {
		t.Fatalf("shadowing invoice.paid: %v", err)
	}
	for _, rt := range []string{"invoices", "../invoices", "tenant.invoices", ""} {
		_, err := store.Create(ctx, catalog.Spec{TenantID: f.tenantID, Kind: "stripe", Type: "invoice.voided", ResourceType: rt,
			Schema: []byte(`{"type":"object"}`)})
		if err == nil {
			t.Fatalf("resource type %q accepted", rt)
		}
	}
	// A type of its own, with the resource type nearest to a built-in
	// topic's name: it lands on the shared tenant topic, never sluice.invoices.
	if _, err := store.Create(ctx, catalog.Spec{TenantID: f.tenantID, Kind: "stripe", Type: "invoice.voided", ResourceType: "payment",
		ObjectID: "/data/object/id", Schema: []byte(`{"type":"object"}`)}); err != nil {
		t.Fatal(err)
	}
	s := testenv.RandomSuffix()
	voided := fmt.Appendf(nil, `{"id":"evt_v_%s","type":"invoice.voided","created":%d,"data":{"object":{"id":"in_%s","object":"invoice"}}}`, s, time.Now().Unix(), s)
	paid := invoicePaid("evt_p_"+s, "in_p_"+s, f.customer, 500)
	for _, b := range [][]byte{voided, paid} {
		if code := f.sendSigned(t, b); code != http.StatusAccepted {
			t.Fatal(code)
		}
	}
	recordsFor(t, suite.topics.Tenant("payment"), 1, "evt_v_"+s)
	recordsFor(t, suite.topics.Resource("invoices"), 1, "evt_p_"+s)
	if n := count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_id' = $1 AND topic = $2`, "evt_v_"+s, suite.topics.Tenant("payment")); n != 1 {
		t.Fatalf("tenant type: %d records on the shared topic, want 1", n)
	}
	if n := count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_id' = $1 AND headers ? 'ce_dataschema'`, "evt_p_"+s); n != 0 {
		t.Fatal("a built-in event carries a tenant dataschema")
	}
}

func TestSharedTenantTopicsAreCreatedWithSluicesOwn(t *testing.T) {
	t.Parallel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	want := len(catalog.DefaultResourceTypes)
	testenv.Eventually(t, time.Minute, "the shared tenant topics", func() (bool, error) {
		details, err := adm.ListTopics(context.Background())
		if err != nil {
			return false, err
		}
		found := 0
		for _, rt := range catalog.DefaultResourceTypes {
			// Created by Sluice with its partitions, not by a broker's
			// auto-creation on first produce.
			if d, ok := details[suite.topics.Tenant(rt)]; ok && len(d.Partitions) == 3 {
				found++
			}
		}
		if found < want {
			return false, fmt.Errorf("%d of %d created", found, want)
		}
		return true, nil
	})
}
