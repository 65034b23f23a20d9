package admin_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
)

// An operator answers "what happened to this event?" over HTTP: the
// search finds the inbox row by its provider event id, its trail names
// the deliveries and dead letters, and reading its payload, a dead
// letter's or a conflict's leaves an audit row each; plain reads leave
// none.
func TestEventsDeadLettersAndConflictsOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	rec, tok := b.tokenRecord(t, admintoken.RoleRead, w.tenant)

	status, got := b.do(t, tok, http.MethodGet, "/admin/v1/events?status=published", nil)
	search := decode[struct {
		Items []struct {
			ID      int64  `json:"id"`
			EventID string `json:"event_id"`
		} `json:"items"`
	}](t, got)
	if status != http.StatusOK || len(search.Items) != 1 {
		t.Fatalf("search: %d %s, want the world's one event", status, got)
	}
	byID := "/admin/v1/events?event_id=" + url.QueryEscape(search.Items[0].EventID)
	if status, got := b.do(t, tok, http.MethodGet, byID, nil); status != http.StatusOK || !strings.Contains(string(got), `"id":`+w.inboxID) {
		t.Errorf("search by event id: %d %s", status, got)
	}
	status, got = b.do(t, tok, http.MethodGet, "/admin/v1/events/"+w.inboxID, nil)
	trail := decode[struct {
		Event struct {
			TenantID string `json:"tenant_id"`
		} `json:"event"`
		Deliveries  []struct{ Outcome string } `json:"deliveries"`
		DeadLetters []struct{ ID int64 }       `json:"dead_letters"`
	}](t, got)
	if status != http.StatusOK || trail.Event.TenantID != w.tenant || len(trail.DeadLetters) != 2 || len(trail.Deliveries) == 0 {
		t.Errorf("trail: %d %s, want the event with its deliveries and two dead letters", status, got)
	}
	status, got = b.do(t, tok, http.MethodGet, "/admin/v1/dead-letters/"+w.deadLetter+"/summary", nil)
	if l := decode[operate.DeadLetter](t, got); status != http.StatusOK || strconv.FormatInt(l.ID, 10) != w.deadLetter || l.TenantID != w.tenant ||
		strings.Contains(string(got), `"payload"`) {
		t.Errorf("dead letter's summary: %d %s, want the letter without its record", status, got)
	}
	if len(b.auditRows(t, rec.ID)) != 0 {
		t.Fatal("plain reads were audited")
	}
	status, got = b.do(t, tok, http.MethodGet, "/admin/v1/events/"+w.inboxID+"/payload", nil)
	if status != http.StatusOK || !strings.Contains(string(got), `"state":"kept"`) {
		t.Errorf("payload: %d %s", status, got)
	}
	if status, got := b.do(t, tok, http.MethodGet, "/admin/v1/dead-letters/"+w.deadLetter, nil); status != http.StatusOK || !strings.Contains(string(got), `"payload"`) {
		t.Errorf("dead letter: %d %s", status, got)
	}
	if status, got := b.do(t, tok, http.MethodGet, "/admin/v1/conflicts/"+w.conflict, nil); status != http.StatusOK || !strings.Contains(string(got), `"newcomer"`) {
		t.Errorf("conflict: %d %s", status, got)
	}
	want := []auditRow{
		{rec.ID, "event.read_payload", "event", w.inboxID, w.tenant, "ok"},
		{rec.ID, "dead_letter.read_payload", "dead_letter", w.deadLetter, w.tenant, "ok"},
		{rec.ID, "conflict.read_payload", "conflict", w.conflict, w.tenant, "ok"},
	}
	if rows := b.auditRows(t, rec.ID); len(rows) != len(want) || rows[0] != want[0] || rows[1] != want[1] || rows[2] != want[2] {
		t.Errorf("audit rows %+v, want %+v", rows, want)
	}
}

// A dead letter replays once: the second replay is 409, and a filtered
// replay applies exactly the letters it selects, with an audit row for
// each action.
func TestDeadLetterReplaysOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	rec, tok := b.tokenRecord(t, admintoken.RoleOperate, w.tenant)
	path := "/admin/v1/dead-letters/" + w.deadLetter + "/replay"
	if status, got := b.do(t, tok, http.MethodPost, path, nil); status != http.StatusOK || !strings.Contains(string(got), `"replayed":[`+w.deadLetter+`]`) {
		t.Fatalf("replay: %d %s", status, got)
	}
	if status, got := b.do(t, tok, http.MethodPost, path, nil); status != http.StatusConflict {
		t.Errorf("second replay: %d %s, want 409", status, got)
	}
	if status, got := b.do(t, tok, http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{}); status != http.StatusUnprocessableEntity {
		t.Errorf("replay with no filter: %d %s, want 422", status, got)
	}
	status, got := b.do(t, tok, http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{"reason": walkSetReason})
	if status != http.StatusOK || !strings.Contains(string(got), `"replayed":[`+w.setLetter+`]`) {
		t.Errorf("filtered replay: %d %s, want [%s]", status, got, w.setLetter)
	}
	if n := b.count(t, `SELECT count(*) FROM dead_letters WHERE headers->>'ce_tenantid' = $1 AND replayed_at IS NOT NULL`, w.tenant); n != 2 {
		t.Errorf("replayed letters: %d, want 2", n)
	}
	var actions []string
	for _, r := range b.auditRows(t, rec.ID) {
		actions = append(actions, r.action+":"+r.outcome)
	}
	if got, want := strings.Join(actions, ","), "dead_letter.replay:ok,dead_letter.replay:conflict,dead_letter.replay_set:invalid,dead_letter.replay_set:ok"; got != want {
		t.Errorf("audit: %s, want %s", got, want)
	}
}

// The Kafka routes answer 503 from a process with no Kafka client, and a
// rewind is a dry run unless told otherwise; what a request gets wrong is
// a problem naming it.
func TestKafkaRoutesAndTheirProblems(t *testing.T) {
	t.Parallel()
	group := topics.Resource("subscriptions")
	noKafka := setupWith(t, process{ingests: true})
	tok := noKafka.token(t, admintoken.RoleOperate, "")
	for _, path := range []string{"/admin/v1/consumer-groups", "/admin/v1/consumer-groups/" + group} {
		if status, got := noKafka.do(t, tok, http.MethodGet, path, nil); status != http.StatusServiceUnavailable {
			t.Errorf("GET %s without Kafka: %d %s, want 503", path, status, got)
		}
	}
	if status, got := noKafka.do(t, tok, http.MethodPost, "/admin/v1/consumer-groups/"+group+"/rewind", map[string]any{"to": "earliest"}); status != http.StatusServiceUnavailable {
		t.Errorf("rewind without Kafka: %d %s, want 503", status, got)
	}

	b := setup(t)
	root := b.token(t, admintoken.RoleOperate, "")
	status, got := b.do(t, root, http.MethodPost, "/admin/v1/consumer-groups/"+group+"/rewind", map[string]any{"to": "earliest"})
	if status != http.StatusOK || !strings.Contains(string(got), `"dry_run":true`) || !strings.Contains(string(got), `"current":-1,"new":0`) {
		t.Errorf("rewind without dry_run: %d %s, want a dry run", status, got)
	}
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		detail       string
	}{
		{http.MethodPost, "/admin/v1/consumer-groups/" + group + "/rewind", map[string]any{"to": "earliest", "offset": 3}, 422, "name exactly one of to, time or offset"},
		{http.MethodPost, "/admin/v1/consumer-groups/" + group + "/rewind", map[string]any{}, 422, "name exactly one of to, time or offset"},
		{http.MethodPost, "/admin/v1/consumer-groups/" + group + "/rewind", map[string]any{"time": "0001-01-01T00:00:00Z"}, 422, "time: must be at or after 1970-01-01T00:00:00Z"},
		{http.MethodPost, "/admin/v1/consumer-groups/" + group + "/rewind", map[string]any{"time": "1969-12-31T23:59:59Z"}, 422, "time: must be at or after 1970-01-01T00:00:00Z"},
		{http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{}, 422, "name at least one of group, tenant_id, reason, since or until"},
		{http.MethodPost, "/admin/v1/consumer-groups/nosuch/rewind", map[string]any{"to": "earliest"}, 404, "consumer group nosuch"},
		{http.MethodGet, "/admin/v1/consumer-groups/nosuch", nil, 404, "consumer group nosuch"},
		{http.MethodGet, "/admin/v1/events?event_type=stripe.invoice.paid", nil, 422, "filter"},
		{http.MethodGet, "/admin/v1/events", nil, 200, `"items":`},
		{http.MethodGet, "/admin/v1/events?status=waiting&cursor=garbage!", nil, 422, "cursor"},
		{http.MethodGet, "/admin/v1/events/999999999", nil, 404, "event 999999999"},
		{http.MethodGet, "/admin/v1/conflicts/12.x", nil, 422, "conflict id"},
		{http.MethodGet, "/admin/v1/slot", nil, 200, `"slot":"sluice"`},
	} {
		status, got := b.do(t, root, c.method, c.path, c.body)
		if status != c.status || !strings.Contains(string(got), c.detail) {
			t.Errorf("%s %s: %d %s, want %d naming %q", c.method, c.path, status, got, c.status, c.detail)
		}
	}
}

// A tenant's event types over HTTP: created (201, and the same spec again
// stores nothing), shown with every version, refused with a problem when
// invalid or a built-in name, deprecated, and released with the count.
func TestEventTypesOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, w.tenant)
	base := "/admin/v1/tenants/" + w.tenant + "/event-types"
	spec := map[string]any{"source_kind": "api", "event_type": "order.placed", "resource_type": "order",
		"schema": map[string]any{"type": "object", "required": []string{"id"}}, "object_id_at": "/id"}
	status, got := b.do(t, tok, http.MethodPost, base, spec)
	if status != http.StatusCreated || !strings.Contains(string(got), `"new":true`) || !strings.Contains(string(got), `"required":["id"]`) {
		t.Fatalf("create: %d %s", status, got)
	}
	if status, got := b.do(t, tok, http.MethodPost, base, spec); status != http.StatusCreated || !strings.Contains(string(got), `"new":false`) {
		t.Errorf("same spec again: %d %s, want new false", status, got)
	}
	for _, c := range []struct {
		body   map[string]any
		status int
		detail string
	}{
		{map[string]any{"source_kind": "api", "event_type": "bad name", "resource_type": "order", "schema": map[string]any{}}, 422, "event_type"},
		{map[string]any{"source_kind": "api", "event_type": "x", "resource_type": "order", "schema": map[string]any{"type": 7}}, 422, "schema"},
		{map[string]any{"source_kind": "stripe", "event_type": "invoice.paid", "resource_type": "order", "schema": map[string]any{}}, 409, "built-in"},
	} {
		if status, got := b.do(t, tok, http.MethodPost, base, c.body); status != c.status || !strings.Contains(string(got), c.detail) {
			t.Errorf("create %v: %d %s, want %d naming %q", c.body, status, got, c.status, c.detail)
		}
	}
	if status, got := b.do(t, tok, http.MethodGet, base+"/api/order.placed", nil); status != http.StatusOK || strings.Count(string(got), `"version":`) != 1 {
		t.Errorf("show: %d %s", status, got)
	}
	unknown := "/admin/v1/tenants/5b2e1d4c-0000-4000-8000-000000000000/event-types"
	if status, got := b.do(t, b.token(t, admintoken.RoleRead, ""), http.MethodGet, unknown, nil); status != http.StatusNotFound {
		t.Errorf("types of an unknown tenant: %d %s, want 404", status, got)
	}
	if status, got := b.do(t, tok, http.MethodGet, base+"/api/nosuch", nil); status != http.StatusNotFound {
		t.Errorf("show unknown: %d %s", status, got)
	}
	if status, got := b.do(t, tok, http.MethodPost, base+"/api/order.placed/deprecate", nil); status != http.StatusOK || !strings.Contains(string(got), `"status":"deprecated"`) {
		t.Errorf("deprecate: %d %s", status, got)
	}
	if status, got := b.do(t, tok, http.MethodGet, base, nil); status != http.StatusOK || strings.Contains(string(got), "order.placed") {
		t.Errorf("list without deprecated: %d %s", status, got)
	}
	if status, got := b.do(t, tok, http.MethodPost, base+"/api/order.placed/release", nil); status != http.StatusOK || !strings.Contains(string(got), `"released":0`) {
		t.Errorf("release: %d %s", status, got)
	}
}
