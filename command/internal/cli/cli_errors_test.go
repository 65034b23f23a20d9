package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
)

// jsonError is what -o json prints on stdout for a refusal.
type jsonError struct {
	Error *struct {
		Message string `json:"message"`
		Code    string `json:"code"`
	} `json:"error"`
}

// With -o json a refusal is one JSON object on stdout, {"error": {...}},
// whatever the command: a script reading stdout never gets nothing.
func TestJSONOutputPrintsTheRefusalAsJSON(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	unknown := uuid.NewString()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tenant", "get", unknown}, "no tenant " + unknown},
		{[]string{"source", "get", unknown}, "no source " + unknown},
		{[]string{"source", "create", "--tenant", unknown, "--kind", "stripe", "--account", "a", "--secret", "whsec_x"}, "no tenant " + unknown},
		{[]string{"apikey", "revoke", unknown}, "no api key " + unknown},
		{[]string{"workspace", "balance", unknown}, "no workspace " + unknown},
		{[]string{"admintoken", "revoke", unknown}, "no such admin token"},
		{[]string{"source", "set-body-limit", "--source", f.sourceID, "--max-body-bytes", "999999999"}, "must be between 1 and 26214400"},
		{[]string{"eventtype", "show", "--tenant", f.tenantID, "--kind", "hmac", "--type", "no.such"}, "no.such"},
	} {
		stdout, stderr, code := cli(t, append(c.args, "-o", "json")...)
		var got jsonError
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || got.Error == nil {
			t.Errorf("sluice %v -o json: stdout %q is not {\"error\": ...} (%v)", c.args, stdout, err)
			continue
		}
		if code != 1 || !strings.Contains(got.Error.Message, c.want) || !strings.Contains(stderr, c.want) {
			t.Errorf("sluice %v -o json: exit %d, error %q, stderr %q; want 1 and %q in both", c.args, code, got.Error.Message, stderr, c.want)
		}
	}
}

// A command line that is wrong is refused before anything runs: one line
// naming the fault, one naming the help to read, exit 2. A refused
// operation is 1, success 0.
func TestUsageErrorsPrintOneLineAndExitTwo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args       []string
		want, help string
	}{
		{[]string{"tenant", "get", "--bogus"}, "unknown flag --bogus", "sluice tenant get --help"},
		{[]string{"tenant", "get"}, `expected "<tenant-id>"`, "sluice tenant get --help"},
		{[]string{"tenant", "create"}, "missing flags: --name=STRING", "sluice tenant create --help"},
		{[]string{"tenant", "list", "--limit", "many"}, "--limit: expected a valid 64 bit int", "sluice tenant list --help"},
		{[]string{"admintoken", "create", "--role", "boss"}, `--role must be one of "read","operate"`, "sluice admintoken create --help"},
		{[]string{"tenant"}, `expected one of "create"`, "sluice tenant --help"},
		{[]string{"admintoken", "create", "--role", "read", "--expires", "0s"}, "--expires: must be positive and at most 8760h", "sluice admintoken create --help"},
		{[]string{"admintoken", "create", "--role", "read", "--expires", "9000h"}, "--expires: must be positive and at most 8760h", "sluice admintoken create --help"},
		{[]string{"nosuch"}, "unexpected argument nosuch", "sluice --help"},
		{[]string{"source", "create", "--tenant", uuid.NewString(), "--kind", "paypal", "--account", "a", "--secret", "s"}, `unknown source kind "paypal"`, "sluice source create --help"},
		{[]string{"reconcile", "--since", "yesterday"}, "--since", "sluice reconcile run --help"},
	} {
		stdout, stderr, code := cli(t, c.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != 2 || stdout != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "sluice: ") || !strings.Contains(lines[0], c.want) ||
			lines[1] != "hint: "+c.help {
			t.Errorf("sluice %v: exit %d, stdout %q, stderr:\n%s\nwant exit 2, nothing on stdout, %q and the hint %q", c.args, code, stdout, stderr, c.want, c.help)
		}
		// -o json anywhere on the line: the refusal is JSON on stdout too.
		stdout, _, code = cli(t, append(c.args, "-o", "json")...)
		var got jsonError
		if c.help != "sluice --help" && c.help != "sluice tenant --help" &&
			(code != 2 || json.Unmarshal([]byte(stdout), &got) != nil || got.Error == nil || !strings.Contains(got.Error.Message, c.want)) {
			t.Errorf("sluice %v -o json: exit %d, stdout %q; want 2 and {\"error\": {\"message\": ...%s...}}", c.args, code, stdout, c.want)
		}
	}
	if _, _, code := cli(t, "tenant", "get", uuid.NewString()); code != 1 {
		t.Errorf("tenant get <unknown id>: exit %d, want 1 (refused)", code)
	}
	if _, _, code := cli(t, "tenant", "list", "--limit", "1"); code != 0 {
		t.Errorf("tenant list: exit %d, want 0", code)
	}
	if stdout, _, code := cli(t, "tenant", "get", "--help"); code != 0 || !strings.HasPrefix(stdout, "Usage: sluice tenant get <tenant-id>") {
		t.Errorf("tenant get --help: exit %d, %q; want 0 and the help", code, stdout)
	}
}

// Replaying a dead letter that does not exist, or a group that does not,
// is a refusal that names it, never "replayed 0".
func TestDLQReplayOfWhatDoesNotExistIsRefused(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"dlq replay --id 987654321987":  "no dead letter 987654321987",
		"dlq replay --group sluice.nah": "no consumer group sluice.nah (there are: ",
	} {
		stdout, stderr, code := cli(t, strings.Fields(args)...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, want) {
			t.Errorf("sluice %s: exit %d, stdout %q, stderr %q; want 1, nothing on stdout and %q", args, code, stdout, stderr, want)
		}
		stdout, _, _ = cli(t, append(strings.Fields(args), "-o", "json")...)
		var got jsonError
		if err := json.NewDecoder(strings.NewReader(stdout)).Decode(&got); err != nil || got.Error == nil || !strings.Contains(got.Error.Message, want) ||
			strings.Count(stdout, "\n") != 1 {
			t.Errorf("sluice %s -o json: %q, want one object {\"error\": ...}", args, stdout)
		}
	}
}

// Every --limit is bounded as the admin API bounds the same list (its
// document says how), and one out of bounds is a usage error before
// anything connects: the database URL here names nothing.
func TestLimitsAreBoundedAsTheAPIBoundsThem(t *testing.T) {
	t.Parallel()
	bounds := apiLimits(t)
	for cmd, path := range map[string]string{
		"tenant list": "/tenants", "source list": "/sources", "workspace list": "/workspaces", "apikey list": "/api-keys",
		"dlq list": "/dead-letters", "reconcile status": "/reconcile/runs", "events search --since 2020-01-01T00:00:00Z": "/events",
		"conflicts list": "/conflicts", "audit list": "/audit",
	} {
		b, ok := bounds[path]
		if !ok {
			t.Errorf("GET %s has no limit parameter in the admin API's document", path)
			continue
		}
		for _, n := range []int{b.min - 1, b.max + 1} {
			args := append(strings.Fields(cmd), "--limit", strconv.Itoa(n), "--database-url", "postgres://127.0.0.1:1/none")
			_, stderr, code := cli(t, args...)
			if code != 2 || !strings.Contains(stderr, fmt.Sprintf("--limit: must be between %d and %d", b.min, b.max)) {
				t.Errorf("sluice %s --limit %d: exit %d, %q; want 2 and the API's bounds %d..%d", cmd, n, code, stderr, b.min, b.max)
			}
		}
		if _, stderr, code := cli(t, append(strings.Fields(cmd), "--limit", strconv.Itoa(b.max))...); code != 0 {
			t.Errorf("sluice %s --limit %d: exit %d, %s", cmd, b.max, code, stderr)
		}
	}
}

type limitBounds struct{ min, max int }

// apiLimits reads the bounds of every GET's limit parameter from the
// running admin listener's document.
func apiLimits(t *testing.T) map[string]limitBounds {
	t.Helper()
	resp, err := http.Get(suite.adminURL + "/admin/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string `json:"name"`
				Schema struct {
					Minimum *float64 `json:"minimum"`
					Maximum *float64 `json:"maximum"`
				} `json:"schema"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]limitBounds{}
	for path, ops := range doc.Paths {
		for _, p := range ops["get"].Parameters {
			if p.Name == "limit" && p.Schema.Minimum != nil && p.Schema.Maximum != nil {
				out[strings.TrimPrefix(path, admin.Prefix)] = limitBounds{int(*p.Schema.Minimum), int(*p.Schema.Maximum)}
			}
		}
	}
	return out
}
