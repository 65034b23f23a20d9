package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/google/uuid"

	"github.com/sluicehq/sluice/internal/testenv"
)

// cliBinary is built once for the package's tests, in a directory
// runSuite removes at the end (a test's own TempDir would vanish with the
// test that happened to build it).
var cliBinary struct {
	once sync.Once
	dir  string
	path string
}

func buildCLI(t *testing.T) {
	dir, err := os.MkdirTemp("", "sluice-cli-")
	if err != nil {
		t.Fatal(err)
	}
	cliBinary.dir = dir
	bin := filepath.Join(dir, "sluice")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/sluice").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cliBinary.path = bin
}

// cli runs the sluice binary against the suite's database and Kafka and
// returns what it printed and its exit code.
func cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return cliWith(t, cliEnv(), args...)
}

// cliEnv is the environment cli runs the binary with.
func cliEnv() []string { return append(sluiceEnv(suite.topics), "SLUICE_SECRET_KEY="+suite.secretKey) }

// cliWith runs the sluice binary with the environment env.
func cliWith(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cliBinary.once.Do(func() { buildCLI(t) })
	if cliBinary.path == "" {
		t.Fatal("no sluice binary")
	}
	cmd := exec.Command(cliBinary.path, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if strings.Contains(errOut.String(), "SQLSTATE") || strings.Contains(out.String(), "SQLSTATE") {
		t.Errorf("sluice %v shows the database's own text:\n%s%s", args, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), code
}

// The administration commands answer in words a person can act on, and an
// id that names nothing is a failure (non-zero), never an empty success.
func TestCLIErrorsNameWhatIsWrongAndUnknownIdsFail(t *testing.T) {
	t.Parallel()
	unknown := uuid.NewString()
	stdout, _, code := cli(t, "tenant", "create", "--name", "cli-"+testenv.RandomSuffix())
	if code != 0 {
		t.Fatalf("tenant create exited %d", code)
	}
	tenant := strings.TrimSpace(strings.SplitN(stdout, "\n", 2)[0])
	account := "acct_cli_" + testenv.RandomSuffix()
	stdout, stderr, code := cli(t, "source", "create", "--tenant", tenant, "--kind", "stripe", "--account", account, "--secret", "whsec_x")
	if code != 0 {
		t.Fatalf("source create exited %d: %s", code, stderr)
	}
	source := strings.TrimSpace(strings.SplitN(stdout, "\n", 2)[0])

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"source", "create", "--tenant", unknown, "--kind", "stripe", "--account", "a", "--secret", "whsec_x"}, "no tenant " + unknown},
		{[]string{"source", "create", "--tenant", tenant, "--kind", "stripe", "--account", account, "--secret", "whsec_y"},
			"tenant " + tenant + " already has a stripe source for account " + account + " (source " + source + ")"},
		{[]string{"workspace", "create", "--tenant", unknown, "--customer", "cus_1"}, "no tenant " + unknown},
		{[]string{"workspace", "balance", unknown}, "no workspace " + unknown},
		{[]string{"workspace", "balance", "not-an-id"}, "<workspace-id>: must be a canonical uuid"},
		{[]string{"workspace", "get", unknown}, "no workspace " + unknown},
		{[]string{"tenant", "get", unknown}, "no tenant " + unknown},
		{[]string{"tenant", "set-limits", "--tenant", unknown, "--rate", "5", "--burst", "5"}, "no tenant " + unknown},
		{[]string{"source", "enable", "--source", unknown}, "no source " + unknown},
		{[]string{"source", "disable", "--source", unknown}, "no source " + unknown},
		{[]string{"source", "get", unknown}, "no source " + unknown},
		{[]string{"source", "set-body-limit", "--source", source, "--max-body-bytes", "999999999"}, "max_body_bytes: must be between 1 and 26214400"},
		{[]string{"apikey", "create", "--tenant", unknown}, "no tenant " + unknown},
		{[]string{"apikey", "revoke", unknown}, "no api key " + unknown},
		{[]string{"admintoken", "create", "--role", "read", "--tenant", unknown}, "no tenant " + unknown},
		{[]string{"admintoken", "revoke", unknown}, "no such admin token: " + unknown},
		{[]string{"lag", "--group", "nosuch"}, "no consumer group nosuch (there are: "},
	} {
		_, stderr, code := cli(t, c.args...)
		if code == 0 {
			t.Errorf("sluice %v exited 0, want a failure", c.args)
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("sluice %v said %q, want it to say %q", c.args, stderr, c.want)
		}
	}
}

// The lag is one line per group unless --partitions; the CLI's changes
// are audited.
func TestCLIListsAndLag(t *testing.T) {
	t.Parallel()
	stdout, _, code := cli(t, "tenant", "create", "--name", "cli-"+testenv.RandomSuffix(), "-o", "json")
	if code != 0 {
		t.Fatalf("tenant create exited %d", code)
	}
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(stdout), &created); err != nil {
		t.Fatalf("tenant create -o json: %v: %s", err, stdout)
	}
	if _, _, code := cli(t, "tenant", "set-limits", "--tenant", created.ID, "--rate", "5", "--burst", "7"); code != 0 {
		t.Fatalf("set-limits exited %d", code)
	}
	// The CLI's changes are audited too, with no token (it acts with the
	// database's credentials).
	if n := count(t, `SELECT count(*) FROM admin_audit WHERE token_id IS NULL AND action = 'tenant.set_limits' AND target_id = $1 AND outcome = 'ok'`, created.ID); n != 1 {
		t.Errorf("audit rows of set-limits: %d, want 1", n)
	}
	stdout, _, _ = cli(t, "tenant", "get", created.ID, "-o", "json")
	if !strings.Contains(stdout, `"limits":{"rate":5,"burst":7}`) {
		t.Errorf("tenant get after set-limits: %s", stdout)
	}

	stdout, stderr, code := cli(t, "lag", "--group", suite.group)
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], suite.group+" ") {
		t.Errorf("lag --group %s: exit %d, want a header and one line:\n%s%s", suite.group, code, stdout, stderr)
	}
	stdout, _, code = cli(t, "lag", "--group", suite.group, "--partitions")
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); code != 0 || len(lines) != 4 { // 3 partitions
		t.Errorf("lag --partitions: exit %d, want a header and 3 lines:\n%s", code, stdout)
	}
}

// The admin listener of the pipeline serves the API: its document without
// a token, its operations only with one; /metrics stays open (private).
func TestAdminListenerServesTheAPI(t *testing.T) {
	t.Parallel()
	// Ready once the suite's topics exist (made in the background at start).
	testenv.Eventually(t, time.Minute, "the suite's admin /readyz", func() (bool, error) {
		resp, err := http.Get(suite.adminURL + "/readyz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	for path, want := range map[string]int{
		"/admin/v1/openapi.json": http.StatusOK,
		"/admin/v1/tenants":      http.StatusUnauthorized,
		"/admin/v1/events":       http.StatusUnauthorized,
		"/admin/v1/slot":         http.StatusUnauthorized,
		"/metrics":               http.StatusOK,
		"/readyz":                http.StatusOK,
	} {
		resp, err := http.Get(suite.adminURL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d: %s", path, resp.StatusCode, want, body)
		}
	}
	stdout, _, code := cli(t, "admintoken", "create", "--role", "read", "-o", "json")
	var tok struct{ ID, Token string }
	if code != 0 || json.Unmarshal([]byte(stdout), &tok) != nil || !strings.HasPrefix(tok.Token, "slk_adm_") {
		t.Fatalf("admintoken create: exit %d %s", code, stdout)
	}
	if n := count(t, `SELECT count(*) FROM admin_audit WHERE action = 'admintoken.create' AND target_id = $1`, tok.ID); n != 1 {
		t.Errorf("audit rows of admintoken create: %d, want 1", n)
	}
	req, _ := http.NewRequest(http.MethodGet, suite.adminURL+"/admin/v1/tenants", nil)
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /admin/v1/tenants with a token: %d", resp.StatusCode)
	}
}

// Every list prints one shape with -o json: an object whose items are the
// list (with next_cursor where it pages), so one jq works on all. Every
// list command of the CLI is here (a new one fails until it is), and ids
// print as ids: a conflict's as <inbox id>-<microseconds>, not as a number
// with a decimal point.
func TestEveryListPrintsItemsInJSON(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	schema := filepath.Join(t.TempDir(), "order.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object","properties":{"id":{"type":"string"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := cli(t, "eventtype", "create", "--tenant", f.tenantID, "--kind", "api", "--type", "order.placed",
		"--resource-type", "order", "--schema-file", schema); code != 0 {
		t.Fatalf("eventtype create: %s", stderr)
	}
	s := testenv.RandomSuffix()
	body := invoicePaid("evt_list_"+s, "in_list_"+s, f.customer, 1000)
	for _, b := range [][]byte{body, bytes.Replace(body, []byte("in_list_"), []byte("in_other_"), 1)} {
		if code := f.sendSigned(t, b); code/100 != 2 {
			t.Fatalf("send: %d", code)
		}
	}
	lists := [][]string{
		{"tenant", "list"}, {"source", "list", "--tenant", f.tenantID}, {"source", "kinds"}, {"workspace", "list", "--tenant", f.tenantID},
		{"apikey", "list", "--tenant", f.tenantID}, {"admintoken", "list"}, {"eventtype", "list", "--tenant", f.tenantID},
		{"eventtype", "show", "--tenant", f.tenantID, "--kind", "api", "--type", "order.placed"}, {"eventtype", "resource-types", "list"},
		{"endpoint", "list", "--tenant", f.tenantID}, {"delivery", "list", "--tenant", f.tenantID}, {"dlq", "list"},
		{"events", "search", "--tenant", f.tenantID}, {"conflicts", "list", "--tenant", f.tenantID}, {"audit", "list"},
		{"lag"}, {"lag", "--partitions"}, {"cdc", "parked", "list"}, {"keys", "status"},
	}
	named := map[string]bool{}
	for _, args := range lists {
		var path []string // the command: the words before the first flag
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				break
			}
			path = append(path, a)
		}
		named[strings.Join(path, " ")] = true
		stdout, stderr, code := cli(t, append(args, "-o", "json")...)
		var page map[string]json.RawMessage
		var items []json.RawMessage
		if code != 0 || json.Unmarshal([]byte(stdout), &page) != nil || json.Unmarshal(page["items"], &items) != nil || items == nil {
			t.Errorf("sluice %v -o json: exit %d, %q %s; want {\"items\": [...]}", args, code, stdout, stderr)
		}
	}
	var grammar CLI
	parser, err := kong.New(&grammar, kong.Name("sluice"))
	if err != nil {
		t.Fatal(err)
	}
	for _, leaf := range parser.Model.Leaves(true) {
		if path := strings.TrimPrefix(leaf.FullPath(), "sluice "); leaf.Name == "list" && !named[path] {
			t.Errorf("sluice %s is a list this test does not check", path)
		}
	}

	var conflicts struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	runJSON(t, &conflicts, "conflicts", "list", "--tenant", f.tenantID)
	text := runText(t, "conflicts", "list", "--tenant", f.tenantID)
	if len(conflicts.Items) != 1 || !regexp.MustCompile(`^[1-9][0-9]*-[0-9]+$`).MatchString(conflicts.Items[0].ID) ||
		!strings.Contains(text, "\n"+conflicts.Items[0].ID+" ") {
		t.Errorf("conflicts list: %+v\n%s\nwant one conflict whose id reads <inbox id>-<microseconds>", conflicts.Items, text)
	}
	if _, stderr, code := cli(t, "conflicts", "get", conflicts.Items[0].ID); code != 0 {
		t.Errorf("conflicts get %s: %s", conflicts.Items[0].ID, stderr)
	}
}
