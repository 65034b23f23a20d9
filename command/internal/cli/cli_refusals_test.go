package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// With -o json a refusal names its code: its sub-kind's, or its kind's
// (the admin API's table, docs/admin-api.md#refusals), and exits 1 whatever
// its kind.
func TestJSONRefusalsNameTheirCode(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	schema := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args       []string
		code, want string
	}{
		{[]string{"tenant", "get", uuid.NewString()}, "not_found", "no tenant"},
		{[]string{"eventtype", "create", "--tenant", f.tenantID, "--kind", "stripe", "--type", "invoice.paid", "--schema-file", schema,
			"--resource-type", "order"}, "builtin", "built-in"},
		{[]string{"apikey", "revoke", uuid.NewString()}, "not_found", "no api key"},
	} {
		stdout, stderr, exit := cli(t, append(c.args, "-o", "json")...)
		var got jsonError
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || got.Error == nil || got.Error.Code != c.code ||
			!strings.Contains(got.Error.Message, c.want) || exit != 1 {
			t.Errorf("sluice %v -o json: exit %d, stdout %q, stderr %q; want 1 and code %q", c.args, exit, stdout, stderr, c.code)
		}
	}
}
