package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// What text output shows of a name: control characters, bidirectional
// controls and bytes that are not UTF-8 escaped, the rest unchanged.
func TestShownEscapesControlCharactersOnly(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Acme GmbH":              "Acme GmbH",
		`C:\temp "x" 'y'`:        `C:\temp "x" 'y'`,
		"Café 日本 🙂":              "Café 日本 🙂",
		"red\x1b[31m!":           `red\x1b[31m!`,
		"a\tb\nc\rd":             `a\tb\nc\rd`,
		"bell\a nul\x00":         `bell\a nul\x00`,
		"c1 \u009b2J":            `c1 \u009b2J`,
		"rtl \u202etxt.exe":      `rtl \u202etxt.exe`,
		"bad \xff\xfe bytes":     `bad \xff\xfe bytes`,
		"U+FFFD \uFFFD is text":  "U+FFFD \uFFFD is text",
		"title \x1b]0;pwned\x07": `title \x1b]0;pwned\a`,
	} {
		if got := shown(in); got != want {
			t.Errorf("shown(%q) = %q, want %q", in, got, want)
		}
	}
	if got := shownMessage("line one\n\tindented \x1b[2J"); got != "line one\n\tindented \\x1b[2J" {
		t.Errorf("shownMessage kept %q", got)
	}
}

// A tenant, workspace, customer or account whose name holds terminal
// escapes (written before input was checked, or straight into the
// database) prints escaped in text output and raw in JSON, and cannot
// forge a line of a table.
func TestTextOutputEscapesControlCharactersInNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newTenant(t)
	evil := "evil\x1b]0;pwned\x07\x1b[2J\nforged\tcell\u202e"
	escaped := `evil\x1b]0;pwned\a\x1b[2J\nforged\tcell\u202e`
	for _, q := range []string{
		`UPDATE tenants SET name = $2 WHERE id = $1`,
		`UPDATE workspaces SET name = $2 WHERE tenant_id = $1`,
		`UPDATE workspace_customers SET customer_id = $2 WHERE tenant_id = $1`,
		`UPDATE sources SET account = $2 WHERE tenant_id = $1`,
	} {
		if _, err := suite.pool.Exec(ctx, q, f.tenantID, evil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, args := range [][]string{
		{"tenant", "get", f.tenantID},
		{"workspace", "get", f.workspaceID},
		{"workspace", "list", "--tenant", f.tenantID},
		{"source", "get", f.sourceID},
		{"source", "list", "--tenant", f.tenantID},
	} {
		stdout, stderr, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("sluice %v: exit %d: %s", args, code, stderr)
		}
		if strings.IndexFunc(stdout, func(r rune) bool { return r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) }) >= 0 ||
			!strings.Contains(stdout, escaped) {
			t.Errorf("sluice %v printed %q, want the name as %s and no control character", args, stdout, escaped)
		}
		if strings.HasSuffix(args[1], "list") && strings.Count(stdout, "\n") != 2 {
			t.Errorf("sluice %v printed %d lines, want a header and one row:\n%s", args, strings.Count(stdout, "\n"), stdout)
		}
		stdout, _, _ = cli(t, append(args, "-o", "json")...)
		if !strings.Contains(stdout, "forged") {
			t.Fatalf("sluice %v -o json: %s", args, stdout)
		}
		var v any
		if err := json.Unmarshal([]byte(stdout), &v); err != nil || !strings.Contains(jsonStrings(v), evil) {
			t.Errorf("sluice %v -o json does not hold the name as it is: %s", args, stdout)
		}
	}
	// A command line holding a control character is refused before it
	// runs (input.go), and the refusal does not repeat it.
	_, stderr, code := cli(t, "lag", "--group", "x\x1b[2J")
	if code != 2 || !strings.Contains(stderr, "--group: must be text without NUL or control characters") || strings.ContainsRune(stderr, 0x1b) {
		t.Errorf("lag --group <escape>: exit %d, stderr %q", code, stderr)
	}
}

// jsonStrings is every string in a decoded JSON value, one a line.
func jsonStrings(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v + "\n")
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}
