package admin_test

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	vocabulary "github.com/sluicehq/sluice/internal/refusal"
)

// The refusal table answers every kind with a status of its own and each
// sub-kind it lists with its kind's status and a problem type of its own,
// so an answer reads back as the refusal it was (what the console does).
func TestEveryRefusalHasOneAnswerThatReadsBack(t *testing.T) {
	t.Parallel()
	kinds := map[vocabulary.Kind]int{}
	statuses := map[int]vocabulary.Kind{}
	types := map[string]bool{}
	for _, a := range admin.Refusals() {
		if a.Refusal.Code == "" {
			if other, ok := statuses[a.Status]; ok {
				t.Errorf("kinds %s and %s share status %d: a client could not tell them apart", a.Refusal.Kind, other, a.Status)
			}
			statuses[a.Status], kinds[a.Refusal.Kind] = a.Refusal.Kind, a.Status
			if a.Type != "" {
				t.Errorf("kind %s has problem type %q; a kind's is about:blank", a.Refusal.Kind, a.Type)
			}
		} else if a.Type != admin.ProblemTypes+a.Refusal.Code || types[a.Type] {
			t.Errorf("sub-kind %s: problem type %q, want %q once", a.Refusal.Code, a.Type, admin.ProblemTypes+a.Refusal.Code)
		}
		types[a.Type] = true
	}
	for _, k := range vocabulary.Kinds() {
		if _, ok := kinds[k]; !ok {
			t.Errorf("kind %s has no answer", k)
		}
	}
	for _, a := range admin.Refusals() {
		if a.Refusal.Code != "" && a.Status != kinds[a.Refusal.Kind] {
			t.Errorf("sub-kind %s answers %d, its kind %s %d", a.Refusal.Code, a.Status, a.Refusal.Kind, kinds[a.Refusal.Kind])
		}
		if got := admin.AnswerOf(a.Refusal.With("in words")); got != a {
			t.Errorf("%s answered %+v, want %+v", a.Refusal.Name(), got, a)
		}
		if back, ok := admin.RefusalOf(a.Status, a.Type); !ok || back != a.Refusal {
			t.Errorf("%d %q read back as %v, want %s", a.Status, a.Type, back, a.Refusal.Name())
		}
	}
	unlisted := vocabulary.Sub(vocabulary.Unauthenticated, "revoked_token", "admin token revoked")
	if got := admin.AnswerOf(unlisted); got.Status != http.StatusUnauthorized || got.Type != "" {
		t.Errorf("an unlisted sub-kind answers %+v, want its kind's", got)
	}
	if _, ok := admin.RefusalOf(http.StatusInternalServerError, ""); ok {
		t.Error("a 500 read back as a refusal")
	}
}

const (
	adminPage      = "../../../../docs/admin-api.md"
	refusalsBegin  = "<!-- refusals:begin (admin.Refusals: TestTheManualStatesTheRefusalTable) -->\n"
	refusalsEnd    = "<!-- refusals:end -->\n"
	refusalsHeader = "| code (`-o json`) | kind | HTTP status | problem `type` | means |\n|---|---|---|---|---|\n"
)

// The manual's table of refusals is the API's.
func TestTheManualStatesTheRefusalTable(t *testing.T) {
	t.Parallel()
	var want strings.Builder
	want.WriteString(refusalsHeader)
	for _, a := range admin.Refusals() {
		typ := a.Type
		if typ == "" {
			typ = "about:blank"
		}
		want.WriteString("| `" + a.Refusal.Name() + "` | " + a.Refusal.Kind.String() + " | " +
			http.StatusText(a.Status) + " (" + strconv.Itoa(a.Status) + ") | `" + typ + "` | " + a.Means + " |\n")
	}
	page, err := os.ReadFile(adminPage)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), refusalsBegin)
	got, _, ok2 := strings.Cut(rest, refusalsEnd)
	if !ok || !ok2 {
		t.Fatalf("%s: no %q ... %q", adminPage, strings.TrimSpace(refusalsBegin), strings.TrimSpace(refusalsEnd))
	}
	if got != want.String() {
		t.Errorf("%s's refusal table is not admin.Refusals(); it should read:\n%s", adminPage, want.String())
	}
}

// A refusal of a sub-kind the table lists carries its problem type and
// its code; a kind's carries none (about:blank); both carry the kind.
func TestAnswersCarryTheirRefusalsProblemType(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, w.tenant)
	base := "/admin/v1/tenants/" + w.tenant + "/event-types"
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		typ          string
		kind, code   string
	}{
		{http.MethodPost, base, map[string]any{"source_kind": "stripe", "event_type": "invoice.paid", "resource_type": "order", "schema": map[string]any{}},
			http.StatusConflict, admin.ProblemTypes + "builtin", "conflict", "builtin"},
		{http.MethodGet, base + "/api/no.such", nil, http.StatusNotFound, "", "not_found", ""},
		{http.MethodGet, "/admin/v1/slot", nil, http.StatusForbidden, "", "forbidden", ""},
		{http.MethodPost, "/admin/v1/tenants/" + w.tenant + "/endpoints", map[string]any{"url": 5}, http.StatusUnprocessableEntity, "", "invalid", ""},
	} {
		status, got := b.do(t, tok, c.method, c.path, c.body)
		p := decode[admin.Problem](t, got)
		if status != c.status || p.Status != c.status || p.Type != c.typ || p.Kind != c.kind || p.Code != c.code {
			t.Errorf("%s %s: %d %s, want %d with type %q, kind %q, code %q", c.method, c.path, status, got, c.status, c.typ, c.kind, c.code)
		}
	}
}
