package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/google/uuid"
)

// What an operator types is held to the admin API's input rules before
// anything connects (the database URL here names nothing): a NUL, a
// control character, an overlong value, a uuid in another spelling or an
// id below 1 is a usage error, one line naming the flag, exit 2, never a
// sentence of the database's.
func TestCLIInputIsCheckedByTheAPIRulesBeforeAnythingConnects(t *testing.T) {
	t.Parallel()
	// In process: a NUL cannot be passed to exec(2), but can reach the
	// command line from a file or a script's generated argv.
	run := func(args ...string) (stdout, stderr string, code int) {
		var out, errOut bytes.Buffer
		code = int(execute(context.Background(), &App{}, args, &out, &errOut))
		return out.String(), errOut.String(), code
	}
	id := uuid.NewString()
	long := strings.Repeat("a", 256)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tenant", "create", "--name", "a\x00b"}, "--name: must be text without NUL or control characters"},
		{[]string{"tenant", "create", "--name", "evil\x1b[2J"}, "--name: must be text without NUL or control characters"},
		{[]string{"tenant", "create", "--name", strings.Repeat("n", 201)}, "--name: must be at most 200 characters"},
		{[]string{"tenant", "create", "--name", ""}, "--name: must not be empty"},
		{[]string{"tenant", "create", "--name", "   "}, "--name: must not be only spaces"},
		{[]string{"tenant", "create", "--name", "bad\xff"}, "--name: is not valid UTF-8"},
		{[]string{"workspace", "create", "--tenant", id, "--customer=c\xc3"}, "--customer: is not valid UTF-8"},
		{[]string{"tenant", "get", strings.ToUpper(id)}, "<tenant-id>: must be a canonical uuid"},
		{[]string{"tenant", "get", "urn:uuid:" + id}, "<tenant-id>: must be a canonical uuid"},
		{[]string{"tenant", "set-limits", "--tenant", "x", "--rate", "1", "--burst", "1"}, "--tenant: must be a canonical uuid"},
		{[]string{"workspace", "create", "--tenant", id, "--customer", "cus\x00"}, "--customer: must be text without NUL"},
		{[]string{"workspace", "list", "--customer", long}, "--customer: must be at most 255 characters"},
		{[]string{"source", "create", "--tenant", id, "--kind", "stripe", "--account", "a\tb", "--secret", "whsec_x"}, "--account: must be text without NUL"},
		{[]string{"source", "create", "--tenant", id, "--kind", "stripe", "--account", "a", "--secret", strings.Repeat("s", 1025)}, "--secret: must be at most 1024 characters"},
		{[]string{"source", "get", "{" + id + "}"}, "<source-id>: must be a canonical uuid"},
		{[]string{"source", "list", "--tenant", strings.ReplaceAll(id, "-", "")}, "--tenant: must be a canonical uuid"},
		{[]string{"apikey", "revoke", "x"}, "<key-id>: must be a canonical uuid"},
		{[]string{"admintoken", "create", "--role", "read", "--name", "ops\x07"}, "--name: must be text without NUL"},
		{[]string{"events", "search", "--event-id", "evt\x00"}, "--event-id: must be text without NUL"},
		{[]string{"events", "trail", "evt\x00"}, "<event>: must be text without NUL"},
		{[]string{"events", "trail", "evt_1", "--source", "s"}, "--source: must be a canonical uuid"},
		{[]string{"dlq", "show", "0"}, "<dead-letter-id>: must be a whole number of at least 1"},
		{[]string{"dlq", "list", "--tenant", "t"}, "--tenant: must be a canonical uuid"},
		{[]string{"dlq", "replay", "--id=-3"}, "--id: must be a whole number of at least 1"},
		{[]string{"audit", "list", "--tenant", "nope"}, "--tenant: must be a canonical uuid"},
		{[]string{"endpoint", "create", "--tenant", id, "--url", "https://example.com/", "--filter", "*", "--description", strings.Repeat("d", 501)},
			"--description: must be at most 500 characters"},
		{[]string{"endpoint", "create", "--tenant", id, "--url", "https://example.com/", "--filter", "a\x00"}, "--filter: must be text without NUL"},
		{[]string{"endpoint", "update", strings.ToUpper(id), "--description", "x"}, "<endpoint-id>: must be a canonical uuid"},
		{[]string{"endpoint", "update", id, "--description", "a\x1bb"}, "--description: must be text without NUL"},
		{[]string{"endpoint", "list", "--tenant", "t"}, "--tenant: must be a canonical uuid"},
		{[]string{"delivery", "list", "--endpoint", "e"}, "--endpoint: must be a canonical uuid"},
		{[]string{"delivery", "list", "--inbox-id", "0"}, "--inbox-id: must be a whole number of at least 1"},
		{[]string{"delivery", "get", "0"}, "<delivery-id>: must be a whole number of at least 1"},
		{[]string{"delivery", "replay", "--endpoint", "E", "--since", "2026-01-01T00:00:00Z", "--until", "2026-01-02T00:00:00Z"}, "--endpoint: must be a canonical uuid"},
		{[]string{"erase", "subject", "x\x00"}, "<subject>: must be text without NUL"},
	} {
		args := append(c.args, "--database-url", "postgres://127.0.0.1:1/none")
		stdout, stderr, code := run(args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != 2 || stdout != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "sluice: "+c.want) ||
			!strings.HasPrefix(lines[1], "hint: sluice ") || strings.Contains(stderr, "database") {
			t.Errorf("sluice %q: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and one line %q, then the hint", c.args, code, stdout, stderr, c.want)
			continue
		}
		stdout, _, code = run(append(args, "-o", "json")...)
		var got jsonError
		if code != 2 || json.Unmarshal([]byte(stdout), &got) != nil || got.Error == nil || !strings.HasPrefix(got.Error.Message, c.want) {
			t.Errorf("sluice %q -o json: exit %d, stdout %q; want 2 and {\"error\": {\"message\": %q...}}", c.args, code, stdout, c.want)
		}
	}
	// What the rules let through goes on to the command: a canonical id
	// that names nothing is its refusal (exit 1), not a usage error.
	if _, stderr, code := cli(t, "tenant", "get", id); code != 1 || !strings.Contains(stderr, "no tenant "+id) {
		t.Errorf("tenant get <unknown canonical id>: exit %d, %q; want 1 and no tenant", code, stderr)
	}
}

// Every flag and argument of every command carries a rule the check
// knows, an id rule sits on an int64, and every flag or argument naming a
// tenant, source, workspace, endpoint, key or token is a uuid: a new
// command cannot forget its ids.
func TestEveryCommandFlagHasAKnownInputRule(t *testing.T) {
	t.Parallel()
	var c CLI
	parser, err := kong.New(&c, kong.Name("sluice"), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	uuids := map[string]bool{"tenant": true, "source": true, "endpoint": true, "tenant-id": true, "source-id": true,
		"workspace-id": true, "endpoint-id": true, "key-id": true, "token-id": true}
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		values := append([]*kong.Value{}, n.Positional...)
		for _, f := range n.Flags {
			values = append(values, f.Value)
		}
		for _, v := range values {
			if n.Type == kong.ApplicationNode {
				continue // the deployment's configuration
			}
			rule := v.Tag.Get("input")
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("sluice %s %s: %v", n.FullPath(), v.Name, r)
					}
				}()
				if rule == "id" {
					_ = checkID(v.Target, v.Name)
				} else {
					_ = checkText(rule, v.Name, "", false)
				}
			}()
			if uuids[v.Name] && rule != "uuid" {
				t.Errorf("sluice %s: %s names an id but is not input:\"uuid\"", n.FullPath(), v.Name)
			}
		}
		for _, child := range n.Children {
			walk(child)
		}
	}
	walk(parser.Model.Node)
}
