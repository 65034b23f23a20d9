package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
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
