package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
)

// adminToken is a token of role, scoped to tenant (empty: unscoped), made
// as `sluice admintoken create` makes it.
func adminToken(t *testing.T, role admintoken.Role, tenant string) string {
	t.Helper()
	_, tok, err := admintoken.Store{Pool: suite.pool}.Create(context.Background(), admintoken.New{Role: role, TenantID: tenant, Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// adminCall sends one request to the pipeline's admin listener.
func adminCall(t *testing.T, token, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, suite.adminURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, got
}
