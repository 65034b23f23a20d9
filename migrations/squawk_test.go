package migrations

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// squawkConfig is .squawk.toml: squawk's own settings (which squawk reads)
// and the findings accepted in migration files (which only this test
// reads; squawk ignores keys it does not know).
type squawkConfig struct {
	Accepted []accepted `toml:"accepted"`
}

// accepted is one rule's findings in some files, kept for a reason.
type accepted struct {
	Rule   string   `toml:"rule"`
	Files  []string `toml:"files"`
	Reason string   `toml:"reason"`
}

// finding is one line of squawk's JSON report.
type finding struct {
	Line    int    `json:"line"` // from 0
	Rule    string `json:"rule_name"`
	Message string `json:"message"`
}

// Every migration passes squawk (the Postgres migration linter, pinned by
// the Makefile; SLUICE_SQUAWK names it) but for the findings .squawk.toml
// accepts, each with its reason: released files are never edited, so what
// they hold is accepted there, and a new file passes clean or says there
// why not. An accepted finding that no longer occurs fails too, so the list
// stays true.
func TestEveryMigrationPassesSquawk(t *testing.T) {
	squawk := os.Getenv("SLUICE_SQUAWK")
	if squawk == "" {
		t.Skip("SLUICE_SQUAWK names no squawk (make test installs it and sets it)")
	}
	var cfg squawkConfig
	raw, err := os.ReadFile("../.squawk.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := toml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf(".squawk.toml: %v", err)
	}
	ok := map[string]bool{} // file + " " + rule
	for _, a := range cfg.Accepted {
		if strings.TrimSpace(a.Reason) == "" {
			t.Errorf(".squawk.toml: %s in %v is accepted without a reason", a.Rule, a.Files)
		}
		for _, f := range a.Files {
			ok[f+" "+a.Rule] = true
		}
	}
	names, err := fs.Glob(FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, name := range names {
		findings, err := lint(squawk, name)
		if err != nil {
			t.Fatalf("squawk %s: %v", name, err)
		}
		for _, f := range findings {
			key := name + " " + f.Rule
			seen[key] = true
			if !ok[key] {
				t.Errorf("migrations/%s:%d: %s: %s (fix the migration, or accept the rule for this file in .squawk.toml with the reason)",
					name, f.Line+1, f.Rule, f.Message)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(ok)) {
		if !seen[key] {
			t.Errorf(".squawk.toml accepts %s, which squawk no longer finds: remove it", key)
		}
	}
}

// lint runs squawk on the Up section of one migration (what goose runs; its
// line numbers kept), inside a transaction unless the file says NO
// TRANSACTION, as goose runs it.
func lint(squawk, name string) ([]finding, error) {
	b, err := fs.ReadFile(FS, name)
	if err != nil {
		return nil, err
	}
	up, _, _ := bytes.Cut(b, []byte("\n-- +goose Down"))
	args := []string{"--config", "../.squawk.toml", "--reporter", "json", "--stdin-filepath", "migrations/" + name}
	if !bytes.Contains(up, []byte("-- +goose NO TRANSACTION")) {
		args = append(args, "--assume-in-transaction")
	}
	cmd := exec.Command(squawk, args...)
	cmd.Stdin = bytes.NewReader(up)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	var findings []finding
	if err := json.Unmarshal(out, &findings); err != nil {
		return nil, fmt.Errorf("read squawk's report: %w: %s", err, out)
	}
	return findings, nil
}
