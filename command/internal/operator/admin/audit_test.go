package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

type auditRow struct {
	token, action, resource, target, tenant, outcome string
}

func (b *bundle) auditRows(t *testing.T, tokenID string) []auditRow {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT coalesce(token_id::text, ''), action, resource, target_id, coalesce(tenant_id::text, ''), outcome
FROM admin_audit WHERE token_id = $1 ORDER BY id`, tokenID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		if err := rows.Scan(&r.token, &r.action, &r.resource, &r.target, &r.tenant, &r.outcome); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func (b *bundle) tokenRecord(t *testing.T, role admintoken.Role, tenant string) (admintoken.Token, string) {
	t.Helper()
	rec, tok, err := b.tokens.Create(context.Background(), admintoken.New{Role: role, TenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return rec, tok
}

// Every operate action leaves one audit row with the token, the action,
// the target, the tenant and the outcome; a refused action leaves one with
// its refusal; a payload read leaves one; plain reads leave none.
func TestAuditRecordsOperateActionsAndPayloadReads(t *testing.T) {
	t.Parallel()
	payload := func(a *admin.API) {
		type in struct {
			admin.SourcePath
		}
		type out struct {
			Body struct {
				Payload string `json:"payload"`
			}
		}
		admin.Handle(a, admin.Route{Op: huma.Operation{OperationID: "test-read-payload", Method: http.MethodGet, Path: "/test/sources/{source_id}/payload"},
			Scope: admin.ScopeTenant, Resource: "source", Action: "source.read_payload", Payload: true},
			func(ctx context.Context, c admin.Call, in *in) (*out, error) { return &out{}, nil })
	}
	b := setup(t, payload)
	w := b.newWorld(t)
	rec, tok := b.tokenRecord(t, admintoken.RoleOperate, "")

	if status, got := b.do(t, tok, http.MethodPost, "/admin/v1/sources/"+w.source+"/disable", nil); status != http.StatusOK {
		t.Fatalf("disable: %d %s", status, got)
	}
	if status, _ := b.do(t, tok, http.MethodGet, "/admin/v1/sources/"+w.source, nil); status != http.StatusOK {
		t.Fatal("get source")
	}
	var src tenancy.Source
	src, _ = b.store.Source(context.Background(), w.source)
	body := map[string]any{"tenant_id": w.tenant, "kind": src.Kind, "account": src.Account, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
	if status, got := b.do(t, tok, http.MethodPost, "/admin/v1/sources", body); status != http.StatusConflict {
		t.Fatalf("duplicate source: %d %s", status, got)
	}
	if status, _ := b.do(t, tok, http.MethodGet, "/admin/v1/test/sources/"+w.source+"/payload", nil); status != http.StatusOK {
		t.Fatal("payload read")
	}
	want := []auditRow{
		{rec.ID, "source.disable", "source", w.source, w.tenant, "ok"},
		{rec.ID, "source.create", "source", "", "", "conflict"},
		{rec.ID, "source.read_payload", "source", w.source, "", "ok"},
	}
	got := b.auditRows(t, rec.ID)
	if len(got) != len(want) {
		t.Fatalf("audit rows %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("audit row %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	readRec, read := b.tokenRecord(t, admintoken.RoleRead, "")
	if status, _ := b.do(t, read, http.MethodPost, "/admin/v1/sources/"+w.source+"/enable", nil); status != http.StatusForbidden {
		t.Fatal("read token acted")
	}
	if rows := b.auditRows(t, readRec.ID); len(rows) != 1 || rows[0].outcome != "forbidden" || rows[0].action != "source.enable" {
		t.Errorf("refused action audit: %+v", rows)
	}
}

// A problem detail names what is wrong in words, never the database's:
// an unknown tenant, the source a new one clashes with, an invalid body.
func TestProblemsNameWhatIsWrong(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, "")
	unknown := "5b2e1d4c-0000-4000-8000-000000000000"
	src, _ := b.store.Source(context.Background(), w.source)
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		detail       string
	}{
		{http.MethodPost, "/admin/v1/sources", map[string]any{"tenant_id": unknown, "kind": "github", "account": "a", "secret": "s"}, 404, "no tenant " + unknown},
		{http.MethodPost, "/admin/v1/sources", map[string]any{"tenant_id": w.tenant, "kind": src.Kind, "account": src.Account, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, 409,
			"tenant " + w.tenant + " already has a standard_webhooks source for account " + src.Account + " (source " + w.source + ")"},
		{http.MethodPost, "/admin/v1/sources", map[string]any{"tenant_id": w.tenant, "kind": "nosuchkind", "account": "a", "secret": "s"}, 422, "kind"},
		{http.MethodGet, "/admin/v1/sources/not-an-id", nil, 422, "path.source_id"},
		{http.MethodGet, "/admin/v1/workspaces/" + unknown, nil, 404, "no workspace " + unknown},
		{http.MethodGet, "/admin/v1/sources?tenant_id=garbage", nil, 422, "query.tenant_id"},
		{http.MethodPut, "/admin/v1/tenants/" + w.tenant + "/limits", map[string]any{"rate": 0, "burst": 1}, 422, "rate"},
		{http.MethodGet, "/admin/v1/sources?kind=nosuchkind", nil, 200, `{"items":[]}`},
		{http.MethodPost, "/admin/v1/workspaces", map[string]any{"tenant_id": w.tenant, "customer": "cus_dup"}, 201, ""},
		{http.MethodPost, "/admin/v1/workspaces", map[string]any{"tenant_id": w.tenant, "customer": "cus_dup"}, 409, "customer cus_dup of tenant " + w.tenant + " already maps to workspace"},
	} {
		status, got := b.do(t, tok, c.method, c.path, c.body)
		if status != c.status || !strings.Contains(string(got), c.detail) {
			t.Errorf("%s %s: %d %s, want %d naming %q", c.method, c.path, status, got, c.status, c.detail)
		}
	}
}
